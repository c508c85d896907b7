import type { Schema } from 'mongoose';

export interface RemovableOptions {
  /**
   * The field of the schema's unique key that a marked record gives up (set to `removed:<id>`), so that a record
   * of the same key can be created right after the removal answered.
   */
  freed?: string;
}

/**
 * Gives an audited schema removals that carry their audit entry: `TenantRepository.removeAudited` marks the record
 * (`removedAt`, with the `*.deleted` entry in its `pendingAudit`, in one write) and AuditTrail deletes it once the
 * entry is in the log. The repository leaves marked records out of every read and write (see its `scope`), so a
 * marked record is gone for the API from the moment the removal answered.
 */
export function removablePlugin(schema: Schema, options: RemovableOptions = {}): void {
  schema.add({ removedAt: { type: Date, freed: options.freed } });
  // The sweep's index: sparse, so it holds only the few records whose removal is not finished.
  schema.index({ removedAt: 1 }, { sparse: true });
}

/** Whether the schema's records are removed by a mark (removablePlugin). */
export function isRemovable(schema: { path(path: string): unknown }): boolean {
  return schema.path('removedAt') !== undefined;
}

/** The unique field a marked record of the schema gives up, if any. */
export function freedFieldOf(schema: Schema): string | undefined {
  return (schema.path('removedAt')?.options as { freed?: string } | undefined)?.freed;
}
