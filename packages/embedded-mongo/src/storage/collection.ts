/**
 * A collection: documents in a Map keyed by canonical `_id` (O(1) `_id` lookups, insertion order for natural scans)
 * plus its indexes, `_id` included. Stored documents are never modified in place: writers hand in a new object
 * (`replace`), so documents already handed to a cursor stay a consistent snapshot. Every write checks all unique
 * indexes before touching anything, so a duplicate key never leaves a write half-applied; then it records the change
 * (the journal, see changes.ts) and applies it. The maps are read-only from outside: the methods below are the only
 * writers.
 *
 * What a collection is (capped, view, time series, clustered, validator, default collation) lives in `options`, the
 * plain document `create`/`collMod` accepted; index definitions are their plain `spec` documents.
 * - Capped: an insert evicts the oldest documents while the collection holds more than `max` documents or `size` bytes.
 * - Time series: documents are keyed by insertion (several may share an `_id`) and there is no `_id` index.
 * - Clustered: the `_id` index is the one `clusteredIndex` names.
 * - Views hold no documents; commands resolve them to their source (commands/views.ts).
 */
import { calculateObjectSize, type Document } from 'bson';
import { compareBson, idKey, identical } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { parseCollation, type Collator } from '../query/collation.js';
import type { ChangeRecorder } from './changes.js';
import { SecondaryIndex } from './secondary-index.js';
import { isTextSpec, TextIndex } from './text-index.js';

export type Index = SecondaryIndex | TextIndex;

const ID_INDEX_SPEC = { v: 2, key: { _id: 1 }, name: '_id_' };

/** Index options that must match for two specs to be "the same index". */
const COMPARED_OPTIONS = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'collation', 'weights', 'default_language', 'language_override'];

const sameKeys = (a: unknown[][] | null, b: unknown[][] | null) =>
  a === b || (!!a && !!b && a.length === b.length && a.every((t, i) => compareBson(t, b[i]) === 0));

export class Collection {
  private readonly documents = new Map<string, Document>();
  private readonly indexMap = new Map<string, Index>();
  private currentOptions: Document;
  /** The `_id` index; none for views and time series collections. */
  readonly idIndex: SecondaryIndex | undefined;
  /** Time series: the key of each stored document (they are keyed by insertion, not by `_id`). */
  private readonly rowKeys: WeakMap<Document, string> | undefined;
  private nextRow = 0;
  /** Capped: BSON size of each stored document, and their total. */
  private readonly sizes: Map<string, number> | undefined;
  private bytes = 0;
  /** Bumped whenever an index is created, rebuilt or dropped: plans cached for this collection are then stale. */
  private indexChanges = 0;

  /** `recorder` receives every change (the engine's, or UNRECORDED for a scratch collection outside the engine). */
  constructor(
    readonly dbName: string,
    readonly name: string,
    options: Document,
    private readonly recorder: ChangeRecorder,
  ) {
    this.currentOptions = options;
    if (options.timeseries) this.rowKeys = new WeakMap();
    else if (!options.viewOn) {
      const clustered = options.clusteredIndex as Document | undefined;
      this.idIndex = new SecondaryIndex(clustered ? { ...clustered, clustered: true } : ID_INDEX_SPEC);
      this.indexMap.set(this.idIndex.name, this.idIndex);
    }
    if (options.capped) this.sizes = new Map();
  }

  get ns(): string {
    return `${this.dbName}.${this.name}`;
  }

  get docs(): ReadonlyMap<string, Document> {
    return this.documents;
  }

  get indexes(): ReadonlyMap<string, Index> {
    return this.indexMap;
  }

  get indexVersion(): number {
    return this.indexChanges;
  }

  get options(): Document {
    return this.currentOptions;
  }

  /** Replaces the collection's options as a whole (what collMod changes). */
  setOptions(options: Document): void {
    this.recorder.record({ op: 'setOptions', db: this.dbName, coll: this.name, options });
    this.currentOptions = options;
  }

  get isView(): boolean {
    return typeof this.options.viewOn === 'string';
  }

  /** The collection's default collation (null: simple). */
  get collator(): Collator | null {
    return parseCollation(this.options.collation);
  }

  /** The primary-map key of a stored document. */
  keyOf(doc: Document): string {
    return this.rowKeys?.get(doc) ?? idKey(doc._id);
  }

  get(id: unknown): Document | undefined {
    return this.rowKeys ? undefined : this.documents.get(idKey(id));
  }

  /**
   * A stored document equal to `doc` in every field: how a recorded change names a document of a collection keyed by
   * insertion (time series), where equal documents are interchangeable.
   */
  findEqual(doc: Document): Document | undefined {
    for (const stored of this.documents.values()) if (compareBson(stored, doc) === 0) return stored;
    return undefined;
  }

  insert(doc: Document): void {
    if (Array.isArray(doc._id)) throw badValue(`can't use an array for _id`);
    const ik = this.rowKeys ? `r${this.nextRow++}` : idKey(doc._id);
    if (this.idIndex && this.documents.has(ik)) throw this.idIndex.duplicateKeyError(this.ns, [doc._id]);
    const keys = this.checkUnique(doc, ik, this.indexMap.values());
    this.recorder.record({ op: 'put', db: this.dbName, coll: this.name, doc });
    this.rowKeys?.set(doc, ik);
    this.documents.set(ik, doc);
    for (const index of this.indexMap.values()) index.add(doc, ik, keys.get(index) ?? null);
    if (this.sizes) {
      this.track(ik, doc);
      this.evict(ik);
    }
  }

  /**
   * Replaces a stored document by a new version with the same `_id`. Only the indexes reading a top-level field the
   * new version changed are checked and maintained: the others' keys are the same for both versions, so their entries
   * stay and cannot newly conflict.
   */
  replace(oldDoc: Document, newDoc: Document): void {
    const ik = this.keyOf(oldDoc);
    const changed = changedFields(oldDoc, newDoc);
    const affected = [...this.indexMap.values()].filter((index) => (index.reads ? [...index.reads].some((f) => changed.has(f)) : changed.size > 0));
    const keys = this.checkUnique(newDoc, ik, affected);
    this.recorder.record({ op: 'put', db: this.dbName, coll: this.name, doc: newDoc, ...(this.rowKeys ? { old: oldDoc } : {}) });
    for (const index of affected) {
      const newKeys = keys.get(index) ?? null;
      const oldKeys = index.keysOf(oldDoc);
      if (sameKeys(oldKeys, newKeys)) continue;
      if (index instanceof SecondaryIndex) index.rekey(newDoc, ik, oldKeys, newKeys);
      else {
        index.remove(oldDoc, ik, oldKeys);
        index.add(newDoc, ik, newKeys);
      }
    }
    this.rowKeys?.set(newDoc, ik);
    this.documents.set(ik, newDoc);
    if (this.sizes) this.track(ik, newDoc);
  }

  delete(doc: Document): void {
    const ik = this.keyOf(doc);
    if (!this.documents.has(ik)) return;
    this.recorder.record({ op: 'delete', db: this.dbName, coll: this.name, id: doc._id, ...(this.rowKeys ? { doc } : {}) });
    this.documents.delete(ik);
    for (const index of this.indexMap.values()) index.remove(doc, ik);
    if (this.sizes) {
      this.bytes -= this.sizes.get(ik) ?? 0;
      this.sizes.delete(ik);
    }
  }

  private track(ik: string, doc: Document): void {
    const size = calculateObjectSize(doc, { ignoreUndefined: true });
    this.bytes += size - (this.sizes!.get(ik) ?? 0);
    this.sizes!.set(ik, size);
  }

  /** Capped: removes the oldest documents (never `keep`, the one just inserted) while over `max` or `size`. */
  private evict(keep: string): void {
    const max = typeof this.options.max === 'number' && this.options.max > 0 ? this.options.max : Infinity;
    const size = Number(this.options.size) || Infinity;
    for (const [ik, doc] of this.documents) {
      if (ik === keep || (this.documents.size <= max && this.bytes <= size)) break;
      this.delete(doc);
    }
  }

  /** Computes the keys of `doc` in `indexes` and throws the duplicate-key error of the first unique violation. */
  private checkUnique(doc: Document, ik: string, indexes: Iterable<Index>): Map<Index, unknown[][] | null> {
    const keys = new Map<Index, unknown[][] | null>();
    for (const index of indexes) {
      const k = index === this.idIndex ? [[doc._id]] : index.keysOf(doc);
      keys.set(index, k);
      const dup = index.conflict(k, ik);
      if (dup) throw index.duplicateKeyError(this.ns, dup);
    }
    return keys;
  }

  /** Creates an index from a validated spec; false when an identical one already exists. */
  createIndex(spec: Document): boolean {
    const key = spec.key as Document;
    if (!key || typeof key !== 'object' || Object.keys(key).length === 0) throw new MongoCommandError(67, 'index key pattern must be a non-empty object');
    if (typeof spec.name !== 'string' || !spec.name) throw new MongoCommandError(9, "The 'name' field is a required property of an index specification");
    // MongoDB lists every index spec as { v, key, name, ...options }.
    const { v: _v, key: _k, name: _n, ...options } = spec;
    const wanted: Document = { v: 2, key, name: spec.name, ...options };
    const byName = this.indexes.get(spec.name);
    const byKey = [...this.indexes.values()].find((ix) => compareBson(ix.spec.key, key) === 0);
    if (byName) {
      if (compareBson(byName.spec.key, key) !== 0)
        throw new MongoCommandError(86, `An existing index has the same name as the requested index but different keys. Requested index: ${JSON.stringify(wanted)}, existing index: ${JSON.stringify(byName.spec)}`);
      if (!sameOptions(byName.spec, wanted))
        throw new MongoCommandError(85, `An existing index has the same name as the requested index but different options. Requested index: ${JSON.stringify(wanted)}, existing index: ${JSON.stringify(byName.spec)}`);
      return false;
    }
    // Same keys under another name is only allowed to differ by partial filter or collation, as in MongoDB.
    if (byKey && compareBson(byKey.spec.partialFilterExpression ?? null, wanted.partialFilterExpression ?? null) === 0 && compareBson(byKey.spec.collation ?? null, wanted.collation ?? null) === 0)
      throw new MongoCommandError(85, `Index already exists with a different name: ${byKey.name}`);
    if (isTextSpec(wanted)) {
      const existing = [...this.indexes.values()].find((ix) => ix.kind === 'text');
      if (existing) throw new MongoCommandError(85, `An equivalent index already exists with a different name and options. Requested index: ${JSON.stringify(wanted)}, existing index: ${JSON.stringify(existing.spec)}`);
    }
    const index = this.build(wanted, true);
    this.recorder.record({ op: 'createIndex', db: this.dbName, coll: this.name, spec: wanted });
    this.indexMap.set(index.name, index);
    this.indexChanges++;
    return true;
  }

  /**
   * Builds an index from `spec` in place of the one of its name (collMod), or adds it (a snapshot being loaded). The
   * documents it holds already are not checked against each other: a `prepareUnique` index keeps its duplicates,
   * collMod checks them before making an index unique, and a snapshot holds what was valid.
   */
  putIndex(spec: Document): void {
    const index = this.build(spec, false);
    this.recorder.record({ op: 'putIndex', db: this.dbName, coll: this.name, spec });
    this.indexMap.set(index.name, index);
    this.indexChanges++;
  }

  /** An index of every stored document, from its spec; with `unique`, throws the duplicate-key error of a violation. */
  private build(spec: Document, unique: boolean): Index {
    const index = isTextSpec(spec) ? new TextIndex(spec) : new SecondaryIndex(spec);
    for (const [ik, doc] of this.documents) {
      const keys = index.keysOf(doc);
      const dup = unique && index.conflict(keys, ik);
      if (dup) throw index.duplicateKeyError(this.ns, dup);
      index.add(doc, ik, keys);
    }
    return index;
  }

  dropIndex(name: string): void {
    if (this.idIndex && name === this.idIndex.name) throw new MongoCommandError(72, 'cannot drop _id index');
    if (!this.indexMap.has(name)) throw new MongoCommandError(27, `index not found with name [${name}]`);
    this.recorder.record({ op: 'dropIndex', db: this.dbName, coll: this.name, name });
    this.indexMap.delete(name);
    this.indexChanges++;
  }

  findIndexByKey(key: Document): Index | undefined {
    return [...this.indexes.values()].find((ix) => compareBson(ix.spec.key, key) === 0);
  }
}

/** The top-level fields whose values differ between two versions of a document (added and removed ones included). */
function changedFields(oldDoc: Document, newDoc: Document): Set<string> {
  const changed = new Set<string>();
  for (const key of Object.keys(newDoc))
    if (!Object.prototype.hasOwnProperty.call(oldDoc, key) || !identical(oldDoc[key], newDoc[key])) changed.add(key);
  for (const key of Object.keys(oldDoc)) if (!Object.prototype.hasOwnProperty.call(newDoc, key)) changed.add(key);
  return changed;
}

function sameOptions(a: Document, b: Document): boolean {
  const norm = (spec: Document, o: string) => (o === 'unique' || o === 'sparse' ? spec[o] === true : (spec[o] ?? null));
  return COMPARED_OPTIONS.every((o) => compareBson(norm(a, o), norm(b, o)) === 0);
}
