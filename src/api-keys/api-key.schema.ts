import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { API_KEY_SCOPES, type ApiKeyScope } from '../auth/auth-principal.js';
import { writeGenerationOf } from '../database/caching/write-generation.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { auditedPlugin } from '../audit/audited.js';

export const API_KEY_REVOCATION_REASONS = ['revoked', 'creator_deactivated', 'creator_demoted'] as const;
export type ApiKeyRevocationReason = (typeof API_KEY_REVOCATION_REASONS)[number];

/** An Interface B credential. Only the SHA-256 of the key is stored; the key itself is shown once. */
@Schema({ collection: 'api_keys', timestamps: true })
export class ApiKey {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ type: [String], enum: API_KEY_SCOPES, required: true })
  scopes: ApiKeyScope[];

  /**
   * The channels the key posts messages and status reports for, and whose events it reads (lower-cased); unset:
   * every channel.
   */
  @Prop({ type: [String], default: undefined })
  channels?: string[];

  @Prop({ required: true, select: false })
  keyHash: string;

  /** The first characters of the key, so people can tell their keys apart. */
  @Prop({ required: true })
  keyPrefix: string;

  /** The admin who created it: the key is revoked when that agent is deactivated or no longer an admin. Unset for keys made before. */
  @Prop({ type: SchemaTypes.ObjectId })
  createdBy?: Types.ObjectId;

  /** After this instant the key authenticates nobody; null for a key that does not expire. */
  @Prop({ type: Date, default: null })
  expiresAt: Date | null;

  /** The last request made with it, to the minute (written at most once a minute). */
  @Prop({ type: Date, default: null })
  lastUsedAt: Date | null;

  @Prop({ type: Date, default: null })
  revokedAt: Date | null;

  /** Why it was revoked: by a caller, or with its creator's deactivation or demotion. */
  @Prop({ type: String, enum: API_KEY_REVOCATION_REASONS, default: null })
  revokedReason: ApiKeyRevocationReason | null;
}

export const ApiKeySchema = SchemaFactory.createForClass(ApiKey);
ApiKeySchema.plugin(tenantScopePlugin);
ApiKeySchema.plugin(auditedPlugin);
/** Bumped by every write to API keys in this process: ApiKeysRepository's lookup cache follows it. */
export const API_KEY_WRITES = writeGenerationOf(ApiKeySchema);
ApiKeySchema.index({ keyHash: 1 }, { unique: true });
ApiKeySchema.index({ companyId: 1, _id: -1 });
// The cap on active keys, and revoking the keys of a deactivated or demoted creator.
ApiKeySchema.index({ companyId: 1, revokedAt: 1, expiresAt: 1 });
ApiKeySchema.index({ companyId: 1, createdBy: 1, revokedAt: 1 });
