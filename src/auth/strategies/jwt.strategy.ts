import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { parseObjectId } from '../../database/object-id.js';
import { AppConfig } from '../../config/app-config.js';
import { TOKEN_AUDIENCE, TOKEN_ISSUER, type AccessTokenClaims } from '../access-token.service.js';
import { AgentAccessCache } from '../agent-access.cache.js';
import type { AgentPrincipal } from '../auth-principal.js';
import { JwtKey } from '../jwt-key.js';

export const JWT_STRATEGY = 'jwt';

/** What jsonwebtoken verified, and what `validate` still checks: a token must carry all of it. */
type VerifiedClaims = Partial<AccessTokenClaims> & { iat?: unknown; exp?: unknown };

/**
 * Verifies the HS256 bearer token (signature, `iss`, `aud`, `exp`, and an `iat` no older than
 * JWT_MAX_AGE), requires `exp` and `iat`, then looks the agent up (AgentAccessCache) so that a
 * deactivated or deleted agent's token stops working, a role change applies from the next request on,
 * and a token issued before the agent's password, role or isActive last changed (`ver`) is refused.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  constructor(
    @Inject(JwtKey) jwtKey: JwtKey,
    @Inject(AgentAccessCache) private readonly agents: AgentAccessCache,
    @Inject(AppConfig) config: AppConfig,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // jsonwebtoken takes a KeyObject; the typings of passport-jwt only name string | Buffer.
      secretOrKey: jwtKey.key as unknown as Buffer,
      algorithms: ['HS256'],
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      // A number of seconds: a string would be parsed (by `ms`) on every verification.
      jsonWebTokenOptions: { maxAge: config.jwtMaxAgeSeconds },
    });
  }

  async validate(claims: VerifiedClaims): Promise<AgentPrincipal> {
    const wellFormed =
      typeof claims.sub === 'string' &&
      parseObjectId(claims.companyId) !== null &&
      typeof claims.exp === 'number' &&
      typeof claims.iat === 'number' &&
      Number.isInteger(claims.ver);
    if (!wellFormed) throw new UnauthorizedException('Invalid bearer token');
    const agent = await this.agents.find(claims.companyId as string, claims.sub as string);
    if (!agent?.isActive) throw new UnauthorizedException('The agent of this token is deactivated or no longer exists');
    if (claims.ver !== (agent.tokenVersion ?? 0)) {
      throw new UnauthorizedException("The bearer token was issued before the agent's password, role or status changed");
    }
    return { kind: 'agent', agentId: claims.sub as string, companyId: claims.companyId as string, role: agent.role };
  }
}
