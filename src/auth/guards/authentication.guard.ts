import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request, Response } from 'express';
import { CachedReflector } from '../../common/route-metadata.js';
import { AuthFailureLimiter } from '../../common/rate-limit/auth-failure-limiter.js';
import { COUNTS_AUTH_FAILURES } from '../decorators/counts-auth-failures.decorator.js';
import { IS_PUBLIC } from '../decorators/public.decorator.js';
import { USES_API_KEY } from '../decorators/api-key-auth.decorator.js';
import { ApiKeyStrategy } from '../strategies/api-key.strategy.js';
import { JwtStrategy } from '../strategies/jwt.strategy.js';

/**
 * The global guard: every route needs a bearer token unless it is `@Public()`; routes marked
 * `@ApiKeyAuth()` (Interface B) need an `x-api-key` instead. Puts the principal on `request.user`.
 * It runs before the rate limit, so it keeps the count of failed authentications itself (AuthFailureLimiter):
 * an address over the limit gets 429 before its credential is even looked at (on login and register: an
 * address over the limit for the e-mail of the body).
 * The Passport strategies check the credential (their `principalOf`), called directly: Passport's own
 * `authenticate` would build a middleware, a strategy object and their closures on every request.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  constructor(
    private readonly reflector: CachedReflector,
    private readonly failures: AuthFailureLimiter,
    private readonly bearer: JwtStrategy,
    private readonly apiKey: ApiKeyStrategy,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
      if (this.reflector.getAllAndOverride<boolean>(COUNTS_AUTH_FAILURES, targets)) this.failures.assertAllowed(req, http.getResponse<Response>(), true);
      return true;
    }
    this.failures.assertAllowed(req, http.getResponse<Response>());
    try {
      req.user = this.reflector.getAllAndOverride<boolean>(USES_API_KEY, targets) ? await this.apiKey.principalOf(req) : await this.bearer.principalOf(req);
      return true;
    } catch (error) {
      if (error instanceof UnauthorizedException) this.failures.recordFailure(req);
      throw error;
    }
  }
}
