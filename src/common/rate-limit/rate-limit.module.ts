import { Module } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config.js';
import { RouteMetadataModule } from '../route-metadata.js';
import { AuthFailureInterceptor } from './auth-failure.interceptor.js';
import { AuthFailureLimiter } from './auth-failure-limiter.js';
import { RATE_LIMIT_STORAGE, RateLimitStorageModule } from './rate-limit-storage.js';
import { COMPANY_THROTTLER, DEFAULT_THROTTLER, RateLimitGuard } from './rate-limit.guard.js';

export function rateLimitOptions(config: AppConfig, storage: ThrottlerStorage): ThrottlerModuleOptions {
  return {
    throttlers: [
      { name: DEFAULT_THROTTLER, limit: config.throttleLimit, ttl: config.throttleTtlMs },
      { name: COMPANY_THROTTLER, limit: config.throttleCompanyLimit, ttl: config.throttleTtlMs },
    ],
    storage,
  };
}

/** Failed authentications per address: for the authentication guard and `@CountsAuthFailures()` routes. */
@Module({
  imports: [RateLimitStorageModule],
  providers: [AuthFailureLimiter, AuthFailureInterceptor],
  exports: [AuthFailureLimiter, AuthFailureInterceptor],
})
export class AuthFailuresModule {}

/**
 * Rate limiting (contract section 3): `THROTTLE_LIMIT` requests per `THROTTLE_TTL_MS` window, counted per
 * agent, per API key, or else per client address, under a ceiling of `THROTTLE_COMPANY_LIMIT` per company;
 * and `AUTH_FAILURE_LIMIT` failed authentications per address (AuthFailureLimiter). Exports
 * `RateLimitGuard`, which the application registers as an `APP_GUARD` after the authentication guard:
 * `{ provide: APP_GUARD, useExisting: RateLimitGuard }`. Requires `AppConfig` (the global AppConfigModule)
 * and the database connection (the counts are shared through it).
 */
@Module({
  imports: [
    AuthFailuresModule,
    RouteMetadataModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [AppConfig, RATE_LIMIT_STORAGE],
      useFactory: rateLimitOptions,
    }),
  ],
  providers: [RateLimitGuard],
  exports: [RateLimitGuard, AuthFailuresModule],
})
export class RateLimitModule {}
