import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../../database/tenancy/tenant-scope.plugin.js';

export const IDEMPOTENCY_STATES = ['running', 'done'] as const;
export type IdempotencyState = (typeof IDEMPOTENCY_STATES)[number];

/**
 * One Idempotency-Key of a company's agent or API key: claimed (`running`) by the request that runs, then (`done`) the
 * answer it wrote, kept until `expiresAt` for the retries of that request.
 */
@Schema({ collection: 'idempotency_keys' })
export class IdempotencyRecord {
  /** The Idempotency-Key after its principal: `agent:<id> <key>` or `api-key:<id> <key>` (principalScopedKey). */
  @Prop({ required: true })
  key: string;

  /** Method and route pattern, e.g. `POST /v1/conversations/:id/messages`. */
  @Prop({ required: true })
  route: string;

  /** The concrete path: the same key on `/v1/conversations/A/messages` and `.../B/messages` are two requests. */
  @Prop({ required: true })
  path: string;

  /** A random token of the claiming request: only it stores the answer or gives the key up. */
  @Prop({ required: true })
  claimId: string;

  @Prop({ type: String, required: true, enum: IDEMPOTENCY_STATES })
  state: IdempotencyState;

  /** While `running`: a claim whose process died is taken over after this time. */
  @Prop({ type: Date, required: true })
  leaseExpiresAt: Date;

  /** The TTL index removes the record at this time; until it does, an expired record counts as absent. */
  @Prop({ type: Date, required: true })
  expiresAt: Date;

  /** Once `done`: the SHA-256 of the request body's content (see request-fingerprint.ts). */
  @Prop({ type: String, default: null })
  fingerprint: string | null;

  @Prop({ type: Number, default: null })
  status: number | null;

  /** The answer's own headers (answer-capture.ts), by lower-case name. */
  @Prop({ type: Object, default: null })
  headers: Record<string, string> | null;

  /** The exact bytes of the answer's body, sealed (answer-seal.ts): some answers carry a secret shown once. */
  @Prop({ type: Buffer, default: null })
  body: Buffer | null;
}

export const IdempotencyRecordSchema = SchemaFactory.createForClass(IdempotencyRecord);
IdempotencyRecordSchema.plugin(tenantScopePlugin);
IdempotencyRecordSchema.index({ companyId: 1, key: 1 }, { unique: true });
IdempotencyRecordSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
