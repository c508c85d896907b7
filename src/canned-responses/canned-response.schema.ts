import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { auditedPlugin } from '../audit/audited.js';

/** At most this many per company: a search matches titles and contents within them (a bounded scan). */
export const MAX_CANNED_RESPONSES_PER_COMPANY = 1000;
export const SHORT_CODE_PATTERN = /^[a-z0-9_-]{1,50}$/;

/** A saved reply agents insert by its short code (contract section 15). */
@Schema({ collection: 'canned_responses', timestamps: true })
export class CannedResponse {
  /** `[a-z0-9_-]{1,50}`, unique within the company. */
  @Prop({ type: String, required: true, maxlength: 50 })
  shortCode: string;

  @Prop({ type: String, required: true, maxlength: 200 })
  title: string;

  /** 1..4096 characters, with only known placeholders (placeholders.ts). */
  @Prop({ type: String, required: true, maxlength: 4096 })
  content: string;
}

export const CannedResponseSchema = SchemaFactory.createForClass(CannedResponse);
CannedResponseSchema.plugin(tenantScopePlugin);
CannedResponseSchema.plugin(auditedPlugin);
CannedResponseSchema.plugin(removablePlugin, { freed: 'shortCode' });
// Unique short codes; the list's order and its keyset; a shortCode prefix search is a range of it.
CannedResponseSchema.index({ companyId: 1, shortCode: 1 }, { unique: true });
