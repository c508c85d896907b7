import { ConflictException, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import type { Agent } from '../agents/agent.schema.js';
import { AgentView } from '../agents/agent.view.js';
import { AgentsRepository } from '../agents/agents.repository.js';
import { CompaniesService } from '../companies/companies.service.js';
import { CompanyView } from '../companies/company.view.js';
import { AppConfig } from '../config/app-config.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { AccessTokenService } from './access-token.service.js';
import type { LoginDto } from './dto/login.dto.js';
import type { LoginResponseDto, RegisterResponseDto } from './dto/auth-response.dto.js';
import type { RegisterDto } from './dto/register.dto.js';
import { PasswordHasher } from './password-hasher.js';
import { SYSTEM_ORIGIN, stageAudit, type AuditOrigin, type StagedAuditEntry } from '../audit/audit-entry.js';
import { AuditTrail } from '../audit/audit-trail.js';

/**
 * Registration refused because the e-mail can already log in. The answer names no cause, and the
 * password is hashed first either way, so neither the words nor the timing tell whether an e-mail is
 * taken (a 409 is still a 409: the per-address limit on failed authentications slows any sweep).
 */
export const REGISTRATION_REFUSED = 'Registration could not be completed with these details';

@Injectable()
export class AuthService {
  constructor(
    private readonly config: AppConfig,
    private readonly companies: CompaniesService,
    private readonly agents: AgentsRepository,
    private readonly settings: SettingsRepository,
    private readonly passwords: PasswordHasher,
    private readonly tokens: AccessTokenService,
    private readonly audit: AuditTrail,
  ) {}

  async register(dto: RegisterDto): Promise<RegisterResponseDto> {
    if (!this.config.allowRegistration) throw new ForbiddenException('Registration is disabled on this server');
    return this.onboard(dto);
  }

  /** Creates a company with its settings and its first agent, an admin, and logs that agent in. */
  async onboard(dto: RegisterDto): Promise<RegisterResponseDto> {
    const passwordHash = await this.passwords.hash(dto.password);
    if (await this.agents.isLoginEmailTaken(dto.email)) throw new ConflictException(REGISTRATION_REFUSED);

    const company = await this.companies.create(dto.companyName);
    try {
      const agent = await this.agents.create(company._id, {
        name: dto.name,
        email: dto.email,
        role: 'admin',
        status: 'online',
        isActive: true,
        tokenVersion: 0,
        passwordHash,
      });
      await this.settings.create(company._id, {});
      return { ...this.issueFor(agent), company: CompanyView.from(company) };
    } catch (error) {
      // The unique index settles a race between two registrations with one e-mail: undo the company.
      await this.companies.remove(company._id);
      if (isDuplicateKeyError(error)) throw new ConflictException(REGISTRATION_REFUSED);
      throw error;
    }
  }

  /**
   * Logins and failed logins are audited in the company of the agent the e-mail belongs to (an e-mail no agent logs
   * in with belongs to no company: nothing to record it in).
   */
  async login(dto: LoginDto, origin: AuditOrigin = SYSTEM_ORIGIN): Promise<LoginResponseDto> {
    const agent = await this.agents.findLoginCandidate(dto.email);
    const passwordMatches = await this.passwords.verify(dto.password, agent?.passwordHash);
    if (!agent) throw new UnauthorizedException('Invalid e-mail or password');
    const self = { ...origin, actor: { type: 'agent' as const, id: agent._id.toHexString() } };
    // Each outcome is one write on the agent, carrying its entry (no second round trip for the audit log).
    if (!passwordMatches || !agent.isActive) {
      const entry = stageAudit(self, 'auth.login_failed', { type: 'login', id: dto.email.trim().toLowerCase() });
      if (await this.agents.recordFailedLogin(agent.companyId, agent._id, entry)) this.written(agent, entry);
      throw new UnauthorizedException(passwordMatches ? 'This agent is deactivated' : 'Invalid e-mail or password');
    }
    const entry = stageAudit(self, 'auth.login', { type: 'agent', id: agent._id.toHexString() });
    // The password is at hand only now: an old hash is stored again at today's cost, in the same write.
    const rehashed = agent.passwordHash && this.passwords.needsRehash(agent.passwordHash) ? await this.passwords.hash(dto.password) : undefined;
    if (await this.agents.recordLogin(agent.companyId, agent._id, entry, rehashed)) this.written(agent, entry);
    return this.issueFor(agent);
  }

  /**
   * Logs an active agent in without its password: for trusted callers only (the demo seed, which prints a fresh
   * token for the demo admin at each start on a kept database). Null when no active agent logs in with `email`.
   */
  async issueWithoutPassword(email: string): Promise<LoginResponseDto | null> {
    const agent = await this.agents.findLoginCandidate(email);
    if (!agent?.isActive) return null;
    return this.issueFor(agent);
  }

  private written(agent: Stored<Agent>, entry: StagedAuditEntry): void {
    this.audit.written(agent.companyId, this.agents.collectionName, agent._id, [entry]);
  }

  private issueFor(agent: Stored<Agent>): LoginResponseDto {
    const claims = { sub: agent._id.toHexString(), companyId: agent.companyId.toHexString(), role: agent.role, ver: agent.tokenVersion ?? 0 };
    return { ...this.tokens.issue(claims, this.config.jwtExpiresInSeconds), agent: AgentView.from(agent) };
  }
}
