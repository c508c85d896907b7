import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Request, Response } from 'express';
import { AuthFailureLimiter } from '../../common/rate-limit/auth-failure-limiter.js';
import { COUNTS_AUTH_FAILURES } from '../decorators/counts-auth-failures.decorator.js';
import { IS_PUBLIC } from '../decorators/public.decorator.js';
import { USES_API_KEY } from '../decorators/api-key-auth.decorator.js';
import { API_KEY_STRATEGY } from '../strategies/api-key.strategy.js';
import { JWT_STRATEGY } from '../strategies/jwt.strategy.js';

class BearerTokenGuard extends AuthGuard(JWT_STRATEGY) {
  override handleRequest<T>(error: unknown, principal: T, info: unknown): T {
    if (error) throw error;
    if (principal) return principal;
    const reason = info instanceof Error ? info : undefined;
    if (reason?.name === 'TokenExpiredError') throw new UnauthorizedException('The bearer token has expired');
    if (reason?.message === 'No auth token') throw new UnauthorizedException('Missing bearer token');
    throw new UnauthorizedException('Invalid bearer token');
  }
}

class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  override handleRequest<T>(error: unknown, principal: T, info: unknown): T {
    if (error) throw error;
    if (principal) return principal;
    // passport-headerapikey's BadRequestError is not an `instanceof Error`: read its message.
    const missing = /missing/i.test(String((info as { message?: unknown } | undefined)?.message ?? ''));
    throw new UnauthorizedException(missing ? 'Missing API key (x-api-key header)' : 'Invalid or revoked API key');
  }
}

/**
 * The global guard: every route needs a bearer token unless it is `@Public()`; routes marked
 * `@ApiKeyAuth()` (Interface B) need an `x-api-key` instead. Puts the principal on `request.user`.
 * It runs before the rate limit, so it keeps the per-address count of failed authentications itself
 * (AuthFailureLimiter): an address over the limit gets 429 before its credential is even looked at.
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  private readonly bearer = new BearerTokenGuard();
  private readonly apiKey = new ApiKeyGuard();

  constructor(
    private readonly reflector: Reflector,
    private readonly failures: AuthFailureLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    const http = context.switchToHttp();
    const req = http.getRequest<Request>();
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) {
      if (this.reflector.getAllAndOverride<boolean>(COUNTS_AUTH_FAILURES, targets)) this.failures.assertAllowed(req, http.getResponse<Response>());
      return true;
    }
    this.failures.assertAllowed(req, http.getResponse<Response>());
    const guard = this.reflector.getAllAndOverride<boolean>(USES_API_KEY, targets) ? this.apiKey : this.bearer;
    try {
      return (await guard.canActivate(context)) as boolean;
    } catch (error) {
      if (error instanceof UnauthorizedException) this.failures.recordFailure(req);
      throw error;
    }
  }
}
