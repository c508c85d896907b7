import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import type { AuditActorType, AuditChanges } from './audit-entry.js';

/**
 * The audit log (contract section 23): append-only, numbered per company, each entry chained to the one before by
 * `hash` = SHA-256(`previousHash` + the entry's canonical JSON). No route changes or deletes an entry; the TTL
 * monitor removes them AUDIT_RETENTION_DAYS after they happened. Its `_id` is the entry id, so relaying an entry
 * again (after a crash) is refused.
 */
@Schema({ collection: 'audit_log', versionKey: false })
export class AuditLogEntry {
  @Prop({ type: String, required: true })
  _id: string;

  @Prop({ required: true })
  sequence: number;

  @Prop({ required: true })
  at: Date;

  @Prop({ type: Object, required: true })
  actor: { type: AuditActorType; id: string | null; name: string | null };

  @Prop({ type: String, required: true })
  action: string;

  @Prop({ type: Object, required: true })
  target: { type: string; id: string };

  @Prop({ type: Object, default: null })
  changes: AuditChanges | null;

  @Prop({ type: String, default: null })
  requestId: string | null;

  @Prop({ type: String, default: null })
  ip: string | null;

  /** The `hash` of the entry before it ('' for a company's first). */
  @Prop({ type: String, required: true })
  previousHash: string;

  @Prop({ type: String, required: true })
  hash: string;

  @Prop({ type: Date, required: true })
  expireAt: Date;
}

export const AuditLogEntrySchema = SchemaFactory.createForClass(AuditLogEntry);
AuditLogEntrySchema.plugin(tenantScopePlugin);
// The chain's order, newest-first pages and verify; unique, so two appenders can never both take a number.
AuditLogEntrySchema.index({ companyId: 1, sequence: 1 }, { unique: true });
AuditLogEntrySchema.index({ companyId: 1, 'actor.id': 1, sequence: -1 });
AuditLogEntrySchema.index({ companyId: 1, action: 1, sequence: -1 });
AuditLogEntrySchema.index({ companyId: 1, 'target.type': 1, 'target.id': 1, sequence: -1 });
AuditLogEntrySchema.index({ companyId: 1, at: -1, sequence: -1 });
AuditLogEntrySchema.index({ expireAt: 1 }, { expireAfterSeconds: 0 });
