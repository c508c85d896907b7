import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { API_KEY_SCOPES, type ApiKeyScope } from '../auth/auth-principal.js';
import { writeGenerationOf } from '../database/caching/write-generation.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

/** An Interface B credential. Only the SHA-256 of the key is stored; the key itself is shown once. */
@Schema({ collection: 'api_keys', timestamps: true })
export class ApiKey {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ type: [String], enum: API_KEY_SCOPES, required: true })
  scopes: ApiKeyScope[];

  @Prop({ required: true, select: false })
  keyHash: string;

  /** The first characters of the key, so people can tell their keys apart. */
  @Prop({ required: true })
  keyPrefix: string;

  @Prop({ type: SchemaTypes.ObjectId })
  createdBy?: Types.ObjectId;

  @Prop({ type: Date, default: null })
  revokedAt: Date | null;
}

export const ApiKeySchema = SchemaFactory.createForClass(ApiKey);
ApiKeySchema.plugin(tenantScopePlugin);
/** Bumped by every write to API keys in this process: ApiKeysRepository's lookup cache follows it. */
export const API_KEY_WRITES = writeGenerationOf(ApiKeySchema);
ApiKeySchema.index({ keyHash: 1 }, { unique: true });
ApiKeySchema.index({ companyId: 1, _id: -1 });
