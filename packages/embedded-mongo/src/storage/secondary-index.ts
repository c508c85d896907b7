/**
 * A declared index: ordered entries `(key tuple, _id)` in MongoDB's BSON order with per-field direction, one entry
 * per array element for multikey fields. Entries with equal keys are ordered by `_id`, so the index behaves as if
 * `_id: 1` were its last field (the planner relies on that for sort ties). Unique, sparse, partial and TTL options
 * are interpreted here; the planner decides when an index may serve a query.
 */
import type { Document } from 'bson';
import { compareBson, formatValue, toNumber } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';
import { parseCollation, type Collator } from '../query/collation.js';
import { compileFilter, type Matcher } from '../query/mingo.js';
import { pathValues } from '../query/paths.js';
import { SortedList, type Position } from './sorted-list.js';

export interface IndexEntry {
  /** Key tuple, one value per index field (missing fields are null). */
  k: unknown[];
  id: unknown;
  /** Canonical `_id` key in the collection's primary map. */
  ik: string;
}

const MAX_KEYS_PER_DOC = 10_000;

/** `values` sorted in BSON order, each distinct value (under `collator`) once. */
export function uniqueSorted(values: unknown[], collator: Collator | null): unknown[] {
  if (values.length < 2) return values;
  const sorted = values.slice().sort((a, b) => compareBson(a, b, collator));
  return sorted.filter((v, i) => i === 0 || compareBson(v, sorted[i - 1], collator) !== 0);
}

export class SecondaryIndex {
  readonly kind = 'btree' as const;
  readonly name: string;
  readonly fields: string[];
  readonly dirs: number[];
  readonly unique: boolean;
  readonly sparse: boolean;
  readonly partial: Matcher | null;
  readonly expireAfterSeconds: number | undefined;
  /** Strings in keys compare under this collation (null: binary). */
  readonly collator: Collator | null;
  /** Position of the `hashed` field, if any: it answers equality only (no ranges, no order) and holds no arrays. */
  readonly hashedField: number;
  readonly entries: SortedList<IndexEntry>;
  /** Set once any document produced several keys (or an array key): such an index cannot provide a sort order. */
  multikey = false;
  private readonly paths: string[][];

  constructor(readonly spec: Document) {
    this.name = spec.name as string;
    const key = spec.key as Document;
    this.fields = Object.keys(key);
    // `$**` is a wildcard index; after the first part, `$ref`, `$id` and `$db` are a DBRef's fields, which MongoDB indexes.
    const dollar = (f: string) => f.split('.').some((part, i) => part.startsWith('$') && (i === 0 || !['$ref', '$id', '$db'].includes(part)));
    const wildcard = this.fields.find((f) => f.includes('$**'));
    if (wildcard) throw new MongoCommandError(67, `Index key '${wildcard}' is not supported by the embedded engine (no wildcard indexes)`);
    const illegal = this.fields.find(dollar);
    if (illegal) throw new MongoCommandError(67, "Index key contains an illegal field name: field name starts with '$'.");
    this.hashedField = this.fields.findIndex((f) => key[f] === 'hashed');
    this.dirs = this.fields.map((f) => {
      const d = key[f];
      if (d === 'hashed') return 1;
      const n = typeof d === 'number' ? d : (d as { _bsontype?: string })?._bsontype ? toNumber(d) : Number.NaN;
      if (n === 1 || n === -1) return n;
      if (Number.isFinite(n) && n !== 0) return n > 0 ? 1 : -1;
      throw new MongoCommandError(67, `Index type ${JSON.stringify(d)} of field '${f}' is not supported by the embedded engine (ascending, descending, hashed and text indexes)`);
    });
    if (this.fields.filter((f) => key[f] === 'hashed').length > 1) throw new MongoCommandError(31303, 'A maximum of one index field is allowed to be hashed');
    if (this.hashedField >= 0 && spec.unique === true) throw new MongoCommandError(16764, 'Currently hashed indexes cannot guarantee uniqueness. Use a regular index.');
    this.paths = this.fields.map((f) => f.split('.'));
    this.unique = spec.unique === true || this.name === '_id_' || spec.prepareUnique === true;
    this.sparse = spec.sparse === true;
    this.collator = parseCollation(spec.collation);
    // Which documents the index holds is decided under its collation, as the planner's implication test assumes.
    this.partial = spec.partialFilterExpression ? compileFilter(spec.partialFilterExpression as Document, { collation: this.collator }) : null;
    this.expireAfterSeconds = typeof spec.expireAfterSeconds === 'number' ? spec.expireAfterSeconds : undefined;
    const dirs = this.dirs;
    const collator = this.collator;
    this.entries = new SortedList<IndexEntry>((a, b) => {
      for (let i = 0; i < dirs.length; i++) {
        const r = compareBson(a.k[i], b.k[i], collator);
        if (r !== 0) return r * dirs[i];
      }
      return compareBson(a.id, b.id);
    });
  }

  /** Compares an entry's first `n` key fields with `key` (index order). */
  compareKeyPrefix(entry: IndexEntry, key: unknown[], n: number): number {
    for (let i = 0; i < n; i++) {
      const r = compareBson(entry.k[i], key[i], this.collator);
      if (r !== 0) return r * this.dirs[i];
    }
    return 0;
  }

  /** Key tuples of `doc`, or null when the document is not in this index (sparse or partial). */
  keysOf(doc: Document): unknown[][] | null {
    if (this.partial && !this.partial.test(doc)) return null;
    let present = false;
    let multikey = false;
    const perField = this.paths.map((parts, i) => {
      const r = pathValues(doc, parts);
      if (i === this.hashedField && r.multikey)
        throw new MongoCommandError(16766, `Error: hashed indexes do not currently support array values. Found array at path: ${this.fields[i]}`);
      multikey ||= r.multikey;
      const values = r.values.map((v) => {
        if (v === undefined) return null;
        present = true;
        return v;
      });
      return uniqueSorted(values, this.collator);
    });
    if (this.sparse && !present) return null;
    let tuples: unknown[][] = [[]];
    for (const values of perField) {
      const next: unknown[][] = [];
      for (const t of tuples) for (const v of values) next.push([...t, v]);
      tuples = next;
      if (tuples.length > MAX_KEYS_PER_DOC)
        throw new MongoCommandError(17280, `document produces more than ${MAX_KEYS_PER_DOC} keys for index ${this.name}`);
    }
    if (multikey) this.multikey = true;
    return tuples;
  }

  add(doc: Document, ik: string, keys = this.keysOf(doc)): void {
    if (!keys) return;
    for (const k of keys) this.entries.insert({ k, id: doc._id, ik });
  }

  remove(doc: Document, ik: string): void {
    const keys = this.keysOf(doc);
    if (!keys) return;
    for (const k of keys) this.entries.delete({ k, id: doc._id, ik });
  }

  /** For a unique index: the first key of `doc` already held by another document (`ik` excluded), else null. */
  conflict(keys: unknown[][] | null, ik: string): unknown[] | null {
    if (!this.unique || !keys) return null;
    const n = this.fields.length;
    for (const k of keys) {
      const from = this.entries.seek((e) => this.compareKeyPrefix(e, k, n), false);
      for (const e of this.entries.range(from, this.entries.end, false)) {
        if (this.compareKeyPrefix(e, k, n) !== 0) break;
        if (e.ik !== ik) return k;
      }
    }
    return null;
  }

  duplicateKeyError(ns: string, key: unknown[]): MongoCommandError {
    const keyPattern: Document = {};
    const keyValue: Document = {};
    this.fields.forEach((f, i) => {
      keyPattern[f] = (this.spec.key as Document)[f];
      keyValue[f] = key[i];
    });
    const shown = this.fields.map((f, i) => `${f}: ${formatValue(key[i])}`).join(', ');
    return new MongoCommandError(11000, `E11000 duplicate key error collection: ${ns} index: ${this.name} dup key: { ${shown} }`, {
      keyPattern,
      keyValue,
    });
  }

  /** Positions bounding the entries whose first key fields fall in an interval (see planner `Interval`). */
  bounds(prefix: unknown[], low?: { value: unknown; inclusive: boolean }, high?: { value: unknown; inclusive: boolean }): [Position, Position] {
    const p = prefix.length;
    // In index order a descending field runs from high to low values.
    const [first, last] = this.dirs[p] === -1 ? [high, low] : [low, high];
    const from = first
      ? this.entries.seek((e) => this.compareKeyPrefix(e, [...prefix, first.value], p + 1), !first.inclusive)
      : this.entries.seek((e) => this.compareKeyPrefix(e, prefix, p), false);
    const to = last
      ? this.entries.seek((e) => this.compareKeyPrefix(e, [...prefix, last.value], p + 1), last.inclusive)
      : this.entries.seek((e) => this.compareKeyPrefix(e, prefix, p), true);
    return [from, to];
  }
}
