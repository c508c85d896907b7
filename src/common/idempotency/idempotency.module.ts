import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { AnswerSeal } from './answer-seal.js';
import { IdempotencyRecord, IdempotencyRecordSchema } from './idempotency-record.schema.js';
import { IdempotencyGuard } from './idempotency.guard.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * `Idempotency-Key` on every POST of both interfaces (contract section 11): a guard and its own collection
 * (`idempotency_keys`, TTL-indexed). Exports `IdempotencyGuard`; the application registers it as the last
 * `APP_GUARD`, after authentication, rate limiting and permissions. Requires `AppConfig` (the global
 * AppConfigModule).
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: IdempotencyRecord.name, schema: IdempotencyRecordSchema }])],
  providers: [IdempotencyRepository, AnswerSeal, IdempotencyService, IdempotencyGuard],
  exports: [IdempotencyGuard],
})
export class IdempotencyModule {}
