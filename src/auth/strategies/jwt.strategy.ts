import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { parseObjectId } from '../../database/object-id.js';
import type { AccessTokenClaims } from '../access-token.service.js';
import { AgentAccessCache } from '../agent-access.cache.js';
import type { AgentPrincipal } from '../auth-principal.js';
import { JwtKey } from '../jwt-key.js';

export const JWT_STRATEGY = 'jwt';

/**
 * Verifies the HS256 bearer token, then looks the agent up (AgentAccessCache) so that a deactivated or
 * deleted agent's token stops working and a role change applies from the next request on.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  constructor(
    @Inject(JwtKey) jwtKey: JwtKey,
    @Inject(AgentAccessCache) private readonly agents: AgentAccessCache,
  ) {
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      // jsonwebtoken takes a KeyObject; the typings of passport-jwt only name string | Buffer.
      secretOrKey: jwtKey.key as unknown as Buffer,
      algorithms: ['HS256'],
    });
  }

  async validate(claims: Partial<AccessTokenClaims>): Promise<AgentPrincipal> {
    if (typeof claims.sub !== 'string' || !parseObjectId(claims.companyId)) {
      throw new UnauthorizedException('Invalid token');
    }
    const agent = await this.agents.find(claims.companyId as string, claims.sub);
    if (!agent?.isActive) throw new UnauthorizedException('The agent of this token is deactivated or no longer exists');
    return { kind: 'agent', agentId: claims.sub, companyId: claims.companyId as string, role: agent.role };
  }
}
