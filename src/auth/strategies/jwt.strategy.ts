import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AgentsRepository } from '../../agents/agents.repository.js';
import { parseObjectId } from '../../database/object-id.js';
import type { AccessTokenClaims } from '../access-token.service.js';
import type { AgentPrincipal } from '../auth-principal.js';
import { JwtKey } from '../jwt-key.js';

export const JWT_STRATEGY = 'jwt';

/**
 * Verifies the HS256 bearer token, then re-reads the agent so that a deactivated or deleted agent's
 * token stops working at once and a role change applies to the next request.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  constructor(
    @Inject(JwtKey) jwtKey: JwtKey,
    @Inject(AgentsRepository) private readonly agents: AgentsRepository,
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
    const agent = await this.agents.findById(claims.companyId as string, claims.sub, { role: 1, isActive: 1 });
    if (!agent?.isActive) throw new UnauthorizedException('The agent of this token is deactivated or no longer exists');
    return { kind: 'agent', agentId: claims.sub, companyId: claims.companyId as string, role: agent.role };
  }
}
