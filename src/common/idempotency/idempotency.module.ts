import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { MongooseModule } from '@nestjs/mongoose';
import { AnswerSeal } from './answer-seal.js';
import { IdempotencyRecord, IdempotencyRecordSchema } from './idempotency-record.schema.js';
import { IdempotencyInterceptor } from './idempotency.interceptor.js';
import { IdempotencyRepository } from './idempotency.repository.js';
import { IdempotencyService } from './idempotency.service.js';

/**
 * `Idempotency-Key` on every POST of both interfaces (contract section 11): a global interceptor and
 * its own collection (`idempotency_keys`, TTL-indexed). Requires `AppConfig` (the global AppConfigModule).
 */
@Module({
  imports: [MongooseModule.forFeature([{ name: IdempotencyRecord.name, schema: IdempotencyRecordSchema }])],
  providers: [IdempotencyRepository, AnswerSeal, IdempotencyService, { provide: APP_INTERCEPTOR, useClass: IdempotencyInterceptor }],
})
export class IdempotencyModule {}
