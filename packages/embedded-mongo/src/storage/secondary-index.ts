/**
 * A declared index: ordered entries `(key tuple, _id)` in MongoDB's BSON order with per-field direction, one entry
 * per array element for multikey fields. Entries with equal keys are ordered by `_id`, so the index behaves as if
 * `_id: 1` were its last field (the planner relies on that for sort ties). Unique, sparse, partial and TTL options
 * are interpreted here; the planner decides when an index may serve a query.
 */
import type { Document } from 'bson';
import { compareBson, formatValue, identical, isPlainObject, toNumber, typeRank } from '../bson-values.js';
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

/**
 * A wildcard field (`$**`, `prefix.$**`) takes two key positions, as MongoDB's wildcard indexes store it: the path of
 * each leaf under the prefix, then its value. The planner binds the path to the one field a query bounds.
 */
export const WILDCARD_PATH = '$_path';
export const WILDCARD_VALUE = '$_value';

/**
 * Each leaf under `value` as `[path, value]`, as MongoDB's wildcard indexes key it: objects are walked into (an empty
 * one is a value), array elements are keyed under the array's own path (which is multikey; objects in it walked
 * into), and `_id` is left out at the top level.
 */
function wildcardLeaves(value: unknown, path: string, out: [string, unknown][], multikeyPaths: Set<string>, top: boolean): void {
  if (Array.isArray(value)) {
    multikeyPaths.add(path);
    for (const element of value) {
      if (isPlainObject(element) && Object.keys(element).length > 0) wildcardLeaves(element, path, out, multikeyPaths, false);
      else out.push([path, element]);
    }
    return;
  }
  if (isPlainObject(value) && (Object.keys(value).length > 0 || top)) {
    for (const [key, child] of Object.entries(value)) {
      if (top && path === '' && key === '_id') continue;
      wildcardLeaves(child, path ? `${path}.${key}` : key, out, multikeyPaths, false);
    }
    return;
  }
  if (value !== undefined) out.push([path, value]);
}

/**
 * The top-level fields a filter reads (a partial index's), added to `out`; false when it reads the document as a whole
 * (`$expr`, `$where`, `$jsonSchema` and any other top-level operator but `$and`/`$or`/`$nor`).
 */
export function filterFields(filter: Document, out: Set<string>): boolean {
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(value) || !value.every((clause) => isPlainObject(clause) && filterFields(clause, out))) return false;
    } else if (key.startsWith('$')) return false;
    else out.add(key.split('.')[0]);
  }
  return true;
}

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
  /** Per key position: set once a document held an array there (MongoDB's multikey paths; not kept for wildcards). */
  readonly multikeyFields: boolean[];
  /**
   * A compound wildcard index: where its wildcard field's two key positions start (see WILDCARD_PATH), the path it
   * covers (`attributes` for `attributes.$**`, '' for `$**`), and the paths some document held an array at.
   */
  readonly wildcard: { position: number; prefix: string; multikeyPaths: Set<string> } | null;
  /**
   * The top-level fields whose values decide the document's keys (key fields, the wildcard's subtree, the partial
   * filter's fields); null when every field may (a `$**` index). An update leaving them all as they were leaves the
   * document's entries as they are.
   */
  readonly reads: ReadonlySet<string> | null;
  private readonly paths: string[][];

  constructor(readonly spec: Document) {
    this.name = spec.name as string;
    const key = spec.key as Document;
    const declared = Object.keys(key);
    // `$**` is a wildcard index; after the first part, `$ref`, `$id` and `$db` are a DBRef's fields, which MongoDB indexes.
    const dollar = (f: string) => f.split('.').some((part, i) => part.startsWith('$') && (i === 0 || !['$ref', '$id', '$db'].includes(part)));
    const wildcards = declared.filter((f) => f.includes('$**'));
    const position = declared.findIndex((f) => f.includes('$**'));
    if (wildcards.length > 0) {
      const field = wildcards[0];
      if (wildcards.length > 1) throw new MongoCommandError(67, 'A compound wildcard index must have exactly one wildcard component');
      if (field !== '$**' && !field.endsWith('.$**')) throw new MongoCommandError(67, `Index key contains an illegal field name: '${field}'`);
      if (key[field] === 'hashed' || key[field] === 'text') throw new MongoCommandError(67, 'A wildcard index field must be ascending or descending');
      if (spec.unique === true) throw new MongoCommandError(67, "Index type 'wildcard' does not support the unique option");
      if (spec.sparse === true) throw new MongoCommandError(67, "Index type 'wildcard' does not support the sparse option");
      if (spec.expireAfterSeconds !== undefined)
        throw new MongoCommandError(67, "Index type 'wildcard' does not support the expireAfterSeconds option");
      if (spec.wildcardProjection !== undefined) throw new MongoCommandError(67, 'wildcardProjection is not supported by the embedded engine');
    }
    // Each key position: a declared field, or the wildcard field's path and value.
    this.fields = declared.flatMap((f, i) => (i === position ? [WILDCARD_PATH, WILDCARD_VALUE] : [f]));
    this.wildcard =
      position < 0 ? null : { position, prefix: declared[position] === '$**' ? '' : declared[position].slice(0, -4), multikeyPaths: new Set() };
    const illegal = declared.filter((f, i) => i !== position).find(dollar);
    if (illegal) throw new MongoCommandError(67, "Index key contains an illegal field name: field name starts with '$'.");
    this.hashedField = this.fields.findIndex((f) => key[f] === 'hashed');
    this.dirs = this.fields.map((f) => {
      const d = f === WILDCARD_PATH || f === WILDCARD_VALUE ? key[declared[position]] : key[f];
      if (d === 'hashed') return 1;
      const n = typeof d === 'number' ? d : (d as { _bsontype?: string })?._bsontype ? toNumber(d) : Number.NaN;
      if (n === 1 || n === -1) return n;
      if (Number.isFinite(n) && n !== 0) return n > 0 ? 1 : -1;
      throw new MongoCommandError(
        67,
        `Index type ${JSON.stringify(d)} of field '${f}' is not supported by the embedded engine (ascending, descending, hashed and text indexes)`,
      );
    });
    if (this.fields.filter((f) => key[f] === 'hashed').length > 1)
      throw new MongoCommandError(31303, 'A maximum of one index field is allowed to be hashed');
    if (this.hashedField >= 0 && spec.unique === true)
      throw new MongoCommandError(16764, 'Currently hashed indexes cannot guarantee uniqueness. Use a regular index.');
    this.paths = this.fields.map((f) => f.split('.'));
    this.multikeyFields = this.fields.map(() => false);
    // The key of a wildcard index always lists several leaves per document: never read it without de-duplicating.
    if (this.wildcard) this.multikey = true;
    this.unique = spec.unique === true || this.name === '_id_' || spec.prepareUnique === true;
    this.sparse = spec.sparse === true;
    this.collator = parseCollation(spec.collation);
    // Which documents the index holds is decided under its collation, as the planner's implication test assumes.
    this.partial = spec.partialFilterExpression ? compileFilter(spec.partialFilterExpression as Document, { collation: this.collator }) : null;
    const reads = new Set(declared.map((f, i) => (i === position ? this.wildcard!.prefix : f).split('.')[0]));
    const whole = reads.has('') || (spec.partialFilterExpression !== undefined && !filterFields(spec.partialFilterExpression as Document, reads));
    this.reads = whole ? null : reads;
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
    const leaves: [string, unknown][] = [];
    if (this.wildcard) {
      const { prefix, multikeyPaths } = this.wildcard;
      const root = prefix === '' ? doc : prefix.split('.').reduce<unknown>((v, part) => (isPlainObject(v) ? v[part] : undefined), doc);
      if (prefix === '' || isPlainObject(root)) wildcardLeaves(root, prefix, leaves, multikeyPaths, prefix === '');
      else if (root !== undefined) wildcardLeaves(root, prefix, leaves, multikeyPaths, false);
      // A document without any leaf under the wildcard is not in the index: the planner only uses it for a bound path.
      if (leaves.length === 0) return null;
      // An array holding a value twice keys it once, as any multikey index does.
      leaves.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : compareBson(a[1], b[1], this.collator)));
      const distinct = leaves.filter(
        (leaf, i) => i === 0 || leaf[0] !== leaves[i - 1][0] || compareBson(leaf[1], leaves[i - 1][1], this.collator) !== 0,
      );
      leaves.splice(0, leaves.length, ...distinct);
    }
    const perField = this.paths.map((parts, i) => {
      if (this.wildcard && (this.fields[i] === WILDCARD_PATH || this.fields[i] === WILDCARD_VALUE)) return [];
      const r = pathValues(doc, parts);
      if (i === this.hashedField && r.multikey)
        throw new MongoCommandError(16766, `Error: hashed indexes do not currently support array values. Found array at path: ${this.fields[i]}`);
      multikey ||= r.multikey;
      if (r.multikey) this.multikeyFields[i] = true;
      const values = r.values.map((v) => {
        if (v === undefined) return null;
        present = true;
        return v;
      });
      return uniqueSorted(values, this.collator);
    });
    if (this.sparse && !present) return null;
    let tuples: unknown[][] = [[]];
    for (let i = 0; i < perField.length; i++) {
      if (this.fields[i] === WILDCARD_VALUE) continue;
      // The wildcard's path and value go together: one pair per leaf.
      const fragments = this.fields[i] === WILDCARD_PATH ? leaves : perField[i].map((v) => [v]);
      const next: unknown[][] = [];
      for (const t of tuples) for (const f of fragments) next.push([...t, ...f]);
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

  remove(doc: Document, ik: string, keys = this.keysOf(doc)): void {
    if (!keys) return;
    for (const k of keys) this.entries.delete({ k, id: doc._id, ik });
  }

  /**
   * Moves a document's entries from its previous keys to its new ones, touching only the keys that differ: a value
   * pushed to an indexed array adds its one entry instead of removing and adding the whole array's. A key equal in
   * order but not identical (an int become a double, a string its collation folds alike) is replaced.
   */
  rekey(doc: Document, ik: string, oldKeys: unknown[][] | null, newKeys: unknown[][] | null): void {
    const entriesOf = (keys: unknown[][] | null) => (keys ?? []).map((k): IndexEntry => ({ k, id: doc._id, ik }));
    const compare = (a: IndexEntry, b: IndexEntry) => this.entries.compare(a, b);
    const before = entriesOf(oldKeys).sort(compare);
    const after = entriesOf(newKeys).sort(compare);
    let i = 0;
    let j = 0;
    while (i < before.length || j < after.length) {
      const order = i === before.length ? 1 : j === after.length ? -1 : compare(before[i], after[j]);
      if (order === 0 && identical(before[i].k, after[j].k)) {
        i++;
        j++;
      } else if (order <= 0) this.entries.delete(before[i++]);
      else this.entries.insert(after[j++]);
    }
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

  /**
   * Positions bounding the entries whose first key fields fall in an interval (see planner `Interval`). With
   * `rank`, a range's open end stops at the edge of that BSON type's values, as MongoDB brackets `$gt`/`$lt` by type.
   */
  bounds(
    prefix: unknown[],
    low?: { value: unknown; inclusive: boolean },
    high?: { value: unknown; inclusive: boolean },
    rank?: number,
  ): [Position, Position] {
    const p = prefix.length;
    // In index order a descending field runs from high to low values.
    const [first, last] = this.dirs[p] === -1 ? [high, low] : [low, high];
    const open = (strict: boolean) =>
      rank === undefined
        ? this.entries.seek((e) => this.compareKeyPrefix(e, prefix, p), strict)
        : this.entries.seek((e) => this.compareKeyPrefix(e, prefix, p) || (typeRank(e.k[p]) - rank) * this.dirs[p], strict);
    const from = first ? this.entries.seek((e) => this.compareKeyPrefix(e, [...prefix, first.value], p + 1), !first.inclusive) : open(false);
    const to = last ? this.entries.seek((e) => this.compareKeyPrefix(e, [...prefix, last.value], p + 1), last.inclusive) : open(true);
    return [from, to];
  }
}
