/** What `insertWithinCap` needs: how many count against the cap now, and how to add and take back one. */
export interface CappedInsert<R> {
  cap: number;
  count: () => Promise<number>;
  insert: () => Promise<R>;
  undo: (inserted: R) => Promise<void>;
}

/**
 * Inserts one record unless that takes the count over `cap`, also under concurrent inserts and without a
 * transaction: insert first, count after, and take the record back if the count is over. Of concurrent
 * inserts, the one whose count comes last sees every other that stays, so what stays never exceeds the cap
 * (concurrent inserts near the cap may all be taken back: the cap errs on refusing). Answers null when refused.
 */
export async function insertWithinCap<R>({ cap, count, insert, undo }: CappedInsert<R>): Promise<R | null> {
  if ((await count()) >= cap) return null;
  const inserted = await insert();
  if ((await count()) <= cap) return inserted;
  await undo(inserted);
  return null;
}
