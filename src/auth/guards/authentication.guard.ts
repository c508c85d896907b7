import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { RouteMetadata } from '../../common/route-metadata.js';
import { AuthFailureLimiter } from '../../common/rate-limit/auth-failure-limiter.js';
import { COUNTS_AUTH_FAILURES } from '../decorators/counts-auth-failures.decorator.js';
import { IS_PUBLIC } from '../decorators/public.decorator.js';
import { USES_API_KEY } from '../decorators/api-key-auth.decorator.js';
import { ApiKeyStrategy } from '../strategies/api-key.strategy.js';
import { JwtStrategy } from '../strategies/jwt.strategy.js';

/** How a route authenticates its caller. */
type Credential = 'none' | 'none-counting-failures' | 'bearer' | 'api-key';

/**
 * The global guard: every route needs a bearer token unless it is `@Public()`; routes marked
 * `@ApiKeyAuth()` (Interface B) need an `x-api-key` instead. Puts the principal on `request.user`.
 * It runs before the rate limit, so it keeps the per-address count of failed authentications itself
 * (AuthFailureLimiter): an address over the limit gets 429 before its credential is even looked at.
 * The Passport strategies check the credential (their `principalOf`), called directly: Passport's own
 * `authenticate` would build a middleware, a strategy object and their closures on every request.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  private readonly credentials: RouteMetadata<Credential>;

  constructor(
    reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
    private readonly bearer: JwtStrategy,
    private readonly apiKey: ApiKeyStrategy,
  ) {
    this.credentials = new RouteMetadata((targets) => {
      if (reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
        return reflector.getAllAndOverride<boolean>(COUNTS_AUTH_FAILURES, targets) ? 'none-counting-failures' : 'none';
      }
      return reflector.getAllAndOverride<boolean>(USES_API_KEY, targets) ? 'api-key' : 'bearer';
    });
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const credential = this.credentials.of(context);
    if (credential === 'none') return true;
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    this.failures.assertAllowed(req, http.getResponse<Response>());
    if (credential === 'none-counting-failures') return true;
    try {
      req.user = credential === 'api-key' ? await this.apiKey.principalOf(req) : await this.bearer.principalOf(req);
      return true;
    } catch (error) {
      if (error instanceof UnauthorizedException) this.failures.recordFailure(req);
      throw error;
    }
  }
}
