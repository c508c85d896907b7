/**
 * A partial index holds only documents that satisfy its filter: a query condition that repeats one of the filter's
 * own (same field, same condition, compared under the same collation) holds for every entry, and need not be tested
 * per document. So `{ owner: x, unread: true }` on an index partial on `{ unread: true }` is an index range alone,
 * which a count counts without reading documents, as MongoDB's does.
 */
import type { Document } from 'bson';
import { compareBson } from '../bson-values.js';
import { sameCollation, type Collator } from './collation.js';

export function withoutPartialConditions(filter: Document, partial: Document | undefined, indexCollator: Collator | null, collator: Collator | null): Document {
  if (!partial || !sameCollation(indexCollator, collator)) return filter;
  let out: Document | null = null;
  for (const [field, condition] of Object.entries(filter)) {
    if (field.startsWith('$') || !(field in partial) || compareBson(condition, partial[field]) !== 0) continue;
    out ??= { ...filter };
    delete out[field];
  }
  return out ?? filter;
}
