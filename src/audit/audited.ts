import type { Schema, UpdateQuery } from 'mongoose';
import type { StagedAuditEntry } from './audit-entry.js';

/**
 * Gives a schema the `pendingAudit` of its documents: audit entries written in the same single-document write as
 * the change they record, until the trail (AuditTrail) has chained them into the audit log. Never selected.
 */
export function auditedPlugin(schema: Schema): void {
  schema.add({ pendingAudit: { type: [Object], default: undefined, select: false } });
  // The sweep's index: sparse, so it holds only the few documents whose entries are not in the log yet.
  schema.index({ 'pendingAudit.at': 1 }, { sparse: true });
}

/** `update` that also writes `entry` with the change (for an insert: `{ ...record, pendingAudit: [entry] }`). */
export function withAudit<U extends UpdateQuery<unknown>>(update: U, entry: StagedAuditEntry): U {
  return { ...update, $push: { ...(update.$push as object), pendingAudit: entry } };
}
