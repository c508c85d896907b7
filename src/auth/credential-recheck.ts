import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import type { AuthPrincipal } from './auth-principal.js';
import { assertPermitted, type Permission } from './guards/permissions.guard.js';
import { ApiKeyStrategy } from './strategies/api-key.strategy.js';
import { JwtStrategy } from './strategies/jwt.strategy.js';

/**
 * Checks a long-lived request's credential again, as a new request with it would be checked: an open event
 * stream is answered once, then read for hours, while its API key may be revoked or expire or lose a scope,
 * and its bearer token expire or be ended by its agent's deactivation, new role or new password. The same
 * strategies as the authentication guard, from the same caches (an agent's access, a key by its hash), so a
 * change made in this process shows at once and one made in another within CROSS_PROCESS_STALENESS_MS.
 */
@Injectable()
export class CredentialRecheck {
  constructor(
    private readonly bearer: JwtStrategy,
    private readonly apiKey: ApiKeyStrategy,
  ) {}

  /**
   * Resolves when the request's credential still authenticates its principal with `required`; rejects with the
   * 401 (UnauthorizedException) or 403 (ForbiddenException) a new request with it would get.
   */
  async check(req: Request, required: Permission = {}): Promise<void> {
    const kind = (req.user as AuthPrincipal | undefined)?.kind;
    const principal = kind === 'api-key' ? await this.apiKey.principalOf(req) : await this.bearer.principalOf(req);
    assertPermitted(principal, required);
  }
}
