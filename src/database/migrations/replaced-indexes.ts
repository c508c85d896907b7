import type { Db } from 'mongodb';

/**
 * Indexes an earlier version declared and this one replaced. Mongoose creates every declared index at start but
 * never drops one, and MongoDB refuses to shard a collection while a unique index does not start with the shard
 * key, so the old ones go (docs/scaling.md, "Upgrading").
 */
export const REPLACED_INDEXES: readonly { collection: string; name: string; by: string }[] = [
  { collection: 'messages', name: 'dedupeKey_1', by: 'companyId_1_dedupeKey_1' },
  { collection: 'flow_executions', name: 'triggerKey_1', by: 'companyId_1_triggerKey_1' },
];

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

/**
 * Drops each replaced index whose replacement exists (so a unique rule is never absent, even for a moment); safe
 * to run twice or on a database that never had them.
 */
export async function dropReplacedIndexes(db: Db): Promise<void> {
  for (const { collection, name, by } of REPLACED_INDEXES) {
    const names: string[] = await db
      .collection(collection)
      .listIndexes()
      .toArray()
      .then((indexes) => indexes.map((index) => index.name as string))
      .catch((error: { code?: number }): string[] => {
        if (error.code === NAMESPACE_NOT_FOUND) return [];
        throw error;
      });
    if (!names.includes(name) || !names.includes(by)) continue;
    await db
      .collection(collection)
      .dropIndex(name)
      .catch((error: { code?: number }) => {
        if (error.code !== INDEX_NOT_FOUND) throw error;
      });
  }
}
