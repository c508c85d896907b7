import { Inject, Injectable, UnauthorizedException } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import jwt, { type VerifyOptions } from 'jsonwebtoken';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { AgentPresence } from '../../agents/agent-presence.js';
import { parseObjectId } from '../../database/object-id.js';
import { AppConfig } from '../../config/app-config.js';
import { TOKEN_AUDIENCE, TOKEN_ISSUER, type AccessTokenClaims } from '../access-token.service.js';
import { AgentAccessCache } from '../agent-access.cache.js';
import type { AgentPrincipal } from '../auth-principal.js';
import { JwtKey } from '../jwt-key.js';
import { VerifiedTokens } from '../verified-tokens.js';

export const JWT_STRATEGY = 'jwt';

/** What jsonwebtoken verified, and what `validate` still checks: a token must carry all of it. */
type VerifiedClaims = Partial<AccessTokenClaims> & { iat?: unknown; exp?: unknown };

const bearerTokenOf = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * How far ahead of this server's clock a token's `iat` may be: the skew between the clocks of a deployment's
 * processes. A token issued further in the future would outlive JWT_MAX_AGE by that much (its age is counted from `iat`).
 */
export const MAX_IAT_AHEAD_SECONDS = 60;

/**
 * Verifies the HS256 bearer token (signature, `iss`, `aud`, `exp`, and an `iat` no older than
 * JWT_MAX_AGE nor more than MAX_IAT_AHEAD_SECONDS ahead), requires `exp` and `iat`, then looks the agent up (AgentAccessCache) so that a
 * deactivated or deleted agent's token stops working, a role change applies from the next request on,
 * and a token issued before the agent's password, role or isActive last changed (`ver`) is refused.
 *
 * A Passport strategy (`jwt`); the authentication guard calls `principalOf` instead of
 * `passport.authenticate`, which builds a middleware and a strategy object per request: the same
 * extraction, verification and `validate`, with a token verified lately taken from VerifiedTokens.
 */
@Injectable()
export class JwtStrategy extends PassportStrategy(Strategy, JWT_STRATEGY) {
  private readonly key: JwtKey['key'];
  private readonly verifyOptions: VerifyOptions;
  private readonly verified: VerifiedTokens;

  constructor(
    @Inject(JwtKey) jwtKey: JwtKey,
    @Inject(AgentAccessCache) private readonly agents: AgentAccessCache,
    @Inject(AppConfig) config: AppConfig,
    @Inject(AgentPresence) private readonly presence: AgentPresence,
  ) {
    // A number of seconds for maxAge: a string would be parsed (by `ms`) on every verification.
    const verifyOptions: VerifyOptions = { algorithms: ['HS256'], issuer: TOKEN_ISSUER, audience: TOKEN_AUDIENCE, maxAge: config.jwtMaxAgeSeconds };
    super({
      jwtFromRequest: bearerTokenOf,
      // jsonwebtoken takes a KeyObject; the typings of passport-jwt only name string | Buffer.
      secretOrKey: jwtKey.key as unknown as Buffer,
      algorithms: verifyOptions.algorithms,
      issuer: TOKEN_ISSUER,
      audience: TOKEN_AUDIENCE,
      jsonWebTokenOptions: { maxAge: config.jwtMaxAgeSeconds },
    });
    this.key = jwtKey.key;
    this.verifyOptions = verifyOptions;
    this.verified = new VerifiedTokens(config.jwtMaxAgeSeconds);
  }

  /** The agent of the request's bearer token; 401 (UnauthorizedException) naming what is wrong with it. */
  async principalOf(req: Request): Promise<AgentPrincipal> {
    const token = bearerTokenOf(req);
    if (!token) throw new UnauthorizedException('Missing bearer token');
    const principal = await this.validate(this.claimsOf(token));
    // Every authenticated request, and every re-check of an open event stream's credential, is a sign of life.
    this.presence.seen(principal.companyId, principal.agentId);
    return principal;
  }

  private claimsOf(token: string): VerifiedClaims {
    const known = this.verified.get(token, Math.floor(Date.now() / 1000));
    if (known) return known;
    let claims: VerifiedClaims;
    try {
      claims = jwt.verify(token, this.key, this.verifyOptions) as VerifiedClaims;
    } catch (error) {
      if (error instanceof jwt.TokenExpiredError) throw new UnauthorizedException('The bearer token has expired');
      throw new UnauthorizedException('Invalid bearer token');
    }
    // jsonwebtoken counts the maximum age from `iat` and lets an `iat` in the future through.
    if (typeof claims?.iat === 'number' && claims.iat > Math.floor(Date.now() / 1000) + MAX_IAT_AHEAD_SECONDS) {
      throw new UnauthorizedException('The bearer token was issued in the future (iat)');
    }
    if (typeof claims === 'object' && claims !== null) this.verified.remember(token, claims);
    return claims;
  }

  async validate(claims: VerifiedClaims): Promise<AgentPrincipal> {
    const wellFormed =
      typeof claims === 'object' &&
      claims !== null &&
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
