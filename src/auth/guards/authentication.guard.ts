import { Injectable, UnauthorizedException, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
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
 */
@Injectable()
export class AuthenticationGuard implements CanActivate {
  private readonly bearer = new BearerTokenGuard();
  private readonly apiKey = new ApiKeyGuard();

  constructor(private readonly reflector: Reflector) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)) return true;
    const guard = this.reflector.getAllAndOverride<boolean>(USES_API_KEY, targets) ? this.apiKey : this.bearer;
    return (await guard.canActivate(context)) as boolean;
  }
}
