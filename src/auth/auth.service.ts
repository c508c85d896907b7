import { ConflictException, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { AgentView } from '../agents/agent.view.js';
import { AgentsRepository } from '../agents/agents.repository.js';
import { CompaniesService } from '../companies/companies.service.js';
import { CompanyView } from '../companies/company.view.js';
import { AppConfig } from '../config/app-config.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { AccessTokenService } from './access-token.service.js';
import type { LoginDto } from './dto/login.dto.js';
import type { LoginResponseDto, RegisterResponseDto } from './dto/auth-response.dto.js';
import type { RegisterDto } from './dto/register.dto.js';
import { PasswordHasher } from './password-hasher.js';

const EMAIL_TAKEN = 'An agent with this e-mail can already log in';

@Injectable()
export class AuthService {
  constructor(
    private readonly config: AppConfig,
    private readonly companies: CompaniesService,
    private readonly agents: AgentsRepository,
    private readonly settings: SettingsRepository,
    private readonly passwords: PasswordHasher,
    private readonly tokens: AccessTokenService,
  ) {}

  async register(dto: RegisterDto): Promise<RegisterResponseDto> {
    if (!this.config.allowRegistration) throw new ForbiddenException('Registration is disabled on this server');
    return this.onboard(dto);
  }

  /** Creates a company with its settings and its first agent, an admin, and logs that agent in. */
  async onboard(dto: RegisterDto): Promise<RegisterResponseDto> {
    if (await this.agents.isLoginEmailTaken(dto.email)) throw new ConflictException(EMAIL_TAKEN);

    const passwordHash = await this.passwords.hash(dto.password);
    const company = await this.companies.create(dto.companyName);
    try {
      const agent = await this.agents.create(company._id, {
        name: dto.name,
        email: dto.email,
        role: 'admin',
        status: 'online',
        isActive: true,
        passwordHash,
      });
      await this.settings.create(company._id, {});
      return { ...this.issueFor(AgentView.from(agent), company._id.toHexString()), company: CompanyView.from(company) };
    } catch (error) {
      // The unique index settles a race between two registrations with one e-mail: undo the company.
      await this.companies.remove(company._id);
      if (isDuplicateKeyError(error)) throw new ConflictException(EMAIL_TAKEN);
      throw error;
    }
  }

  async login(dto: LoginDto): Promise<LoginResponseDto> {
    const agent = await this.agents.findLoginCandidate(dto.email);
    const passwordMatches = await this.passwords.verify(dto.password, agent?.passwordHash);
    if (!agent || !passwordMatches) throw new UnauthorizedException('Invalid e-mail or password');
    if (!agent.isActive) throw new UnauthorizedException('This agent is deactivated');
    return this.issueFor(AgentView.from(agent), agent.companyId.toHexString());
  }

  private issueFor(agent: AgentView, companyId: string): LoginResponseDto {
    const token = this.tokens.issue(
      { sub: agent.id, companyId, role: agent.role },
      this.config.jwtExpiresInSeconds,
    );
    return { ...token, agent };
  }
}
