/**
 * Sort specifications for find-style reads, compared in MongoDB's BSON order (arrays sort by their smallest element
 * ascending, largest descending; null and missing are equal). Aggregation `$sort` stays mingo's.
 */
import type { Document } from 'bson';
import { compareBson } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import type { Collator } from './collation.js';
import { pathValues } from './paths.js';

export interface SortKey {
  field: string;
  parts: string[];
  dir: 1 | -1;
  /** `{ $meta: 'textScore' }`: by the `$text` score, highest first. */
  textScore?: boolean;
}

export interface SortSpec {
  keys: SortKey[];
  /** `{ $natural: 1 | -1 }`: insertion order. */
  natural?: 1 | -1;
}

export function parseSort(sort: unknown): SortSpec | null {
  if (sort === undefined || sort === null) return null;
  if (typeof sort !== 'object' || Array.isArray(sort)) throw badValue('sort must be an object');
  const keys: SortKey[] = [];
  let natural: 1 | -1 | undefined;
  for (const [field, v] of Object.entries(sort as Document)) {
    if (v && typeof v === 'object' && '$meta' in v) {
      if (v.$meta !== 'textScore') throw badValue(`$meta sort by '${String(v.$meta)}' is not supported by the embedded engine (textScore is)`);
      keys.push({ field, parts: field.split('.'), dir: -1, textScore: true });
      continue;
    }
    const n = Number(v);
    if (n !== 1 && n !== -1) throw new MongoCommandError(15975, '$sort key ordering must be 1 (for ascending) or -1 (for descending)');
    if (field === '$natural') natural = n;
    else keys.push({ field, parts: field.split('.'), dir: n });
  }
  if (natural !== undefined && keys.length) throw badValue('$natural sort cannot be combined with other sort keys');
  if (!keys.length && natural === undefined) return null;
  return { keys, natural };
}

/** The value a document sorts by for one key. */
export function sortValue(doc: Document, key: SortKey, collator?: Collator | null): unknown {
  const { values } = pathValues(doc, key.parts);
  let best: unknown = null;
  let first = true;
  for (const raw of values) {
    const v = raw === undefined || (Array.isArray(raw) && raw.length === 0) ? null : raw;
    if (first || compareBson(v, best, collator) * key.dir < 0) best = v;
    first = false;
  }
  return best;
}

/** Sorts documents in place (stable), computing each document's sort values once; strings under `collator`. */
export function sortDocuments(docs: Document[], spec: SortSpec, collator?: Collator | null, scoreOf?: (doc: Document) => number): Document[] {
  if (spec.natural !== undefined) return spec.natural === -1 ? docs.reverse() : docs;
  if (spec.keys.some((k) => k.textScore) && !scoreOf) throw new MongoCommandError(17311, 'textScore sort requires a $text query');
  const keyed = docs.map((doc) => ({ doc, values: spec.keys.map((k) => (k.textScore ? scoreOf!(doc) : sortValue(doc, k, collator))) }));
  keyed.sort((a, b) => {
    for (let i = 0; i < spec.keys.length; i++) {
      const r = compareBson(a.values[i], b.values[i], collator);
      if (r !== 0) return r * spec.keys[i].dir;
    }
    return 0;
  });
  for (let i = 0; i < keyed.length; i++) docs[i] = keyed[i].doc;
  return docs;
}
