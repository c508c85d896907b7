import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AppConfig } from '../../config/app-config.js';
import { RateLimitCounter, RateLimitCounterSchema } from './rate-limit-counter.schema.js';
import { RateLimitCountersRepository } from './rate-limit-counters.repository.js';
import { SharedWindowThrottlerStorage } from './shared-window-throttler.storage.js';

/**
 * The storage the throttler and the auth-failure limiter count in. ThrottlerModule serves it under the
 * library's `ThrottlerStorage` token (its `storage` option), so the guard and anyone injecting
 * `ThrottlerStorage` share this one instance.
 */
export const RATE_LIMIT_STORAGE = Symbol('RATE_LIMIT_STORAGE');

/** The shared storage: counts kept in this process and added up across processes in MongoDB. */
@Module({
  imports: [MongooseModule.forFeature([{ name: RateLimitCounter.name, schema: RateLimitCounterSchema }])],
  providers: [
    RateLimitCountersRepository,
    {
      provide: RATE_LIMIT_STORAGE,
      inject: [AppConfig, RateLimitCountersRepository],
      useFactory: (config: AppConfig, store: RateLimitCountersRepository) =>
        new SharedWindowThrottlerStorage({ store, syncIntervalMs: config.throttleSyncMs }),
    },
  ],
  exports: [RATE_LIMIT_STORAGE],
})
export class RateLimitStorageModule {}
