import { ConflictException, Injectable, UnauthorizedException, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Request } from 'express';
import { catchError, type Observable } from 'rxjs';
import { AuthFailureLimiter } from './auth-failure-limiter.js';

/**
 * On the public routes that check credentials themselves (login, register; see `@CountsAuthFailures()`):
 * a 401, or the 409 of an e-mail that can already log in, counts as a failed authentication of the address
 * and the e-mail of the body.
 */
@Injectable()
export class AuthFailureInterceptor implements NestInterceptor {
  constructor(private readonly failures: AuthFailureLimiter) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (error instanceof UnauthorizedException || error instanceof ConflictException) {
          this.failures.recordFailure(context.switchToHttp().getRequest<Request>(), true);
        }
        throw error;
      }),
    );
  }
}
