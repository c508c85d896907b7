import { Module } from '@nestjs/common';
import { ThrottlerModule, type ThrottlerModuleOptions, type ThrottlerStorage } from '@nestjs/throttler';
import { AppConfig } from '../../config/app-config.js';
import { FixedWindowThrottlerStorage } from './fixed-window-throttler.storage.js';
import { DEFAULT_THROTTLER, RateLimitGuard } from './rate-limit.guard.js';

/**
 * The storage the throttler counts in. ThrottlerModule serves it under the library's `ThrottlerStorage`
 * token (its `storage` option), so the guard and anyone injecting `ThrottlerStorage` share this one
 * instance. A storage shared by several processes (MongoDB) replaces this provider.
 */
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

@Module({
  providers: [{ provide: RATE_LIMIT_STORAGE, useFactory: () => new FixedWindowThrottlerStorage() }],
  exports: [RATE_LIMIT_STORAGE],
})
export class RateLimitStorageModule {}

export function rateLimitOptions(config: AppConfig, storage: ThrottlerStorage): ThrottlerModuleOptions {
  return {
    throttlers: [{ name: DEFAULT_THROTTLER, limit: config.throttleLimit, ttl: config.throttleTtlMs }],
    storage,
  };
}

/**
 * Rate limiting (contract section 3): `THROTTLE_LIMIT` requests per `THROTTLE_TTL_MS` window, counted per
 * agent, per API key, or else per client address. Exports `RateLimitGuard`; the application registers it
 * as an `APP_GUARD` after the authentication guard: `{ provide: APP_GUARD, useExisting: RateLimitGuard }`.
 * Requires `AppConfig` (the global AppConfigModule).
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStorageModule],
      inject: [AppConfig, RATE_LIMIT_STORAGE],
      useFactory: rateLimitOptions,
    }),
  ],
  providers: [RateLimitGuard],
  exports: [RateLimitGuard],
})
export class RateLimitModule {}
