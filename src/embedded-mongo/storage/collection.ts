/**
 * A collection: documents in a Map keyed by canonical `_id` (O(1) `_id` lookups, insertion order for natural scans)
 * plus its indexes, `_id_` included. Stored documents are never modified in place: writers hand in a new object
 * (`replace`), so documents already handed to a cursor stay a consistent snapshot. Every write checks all unique
 * indexes before touching anything, so a duplicate key never leaves a write half-applied.
 */
import type { Document } from 'bson';
import { compareBson, idKey } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { SecondaryIndex } from './secondary-index.js';

const ID_INDEX_SPEC = { v: 2, key: { _id: 1 }, name: '_id_' };

/** Index options that must match for two specs to be "the same index". */
const COMPARED_OPTIONS = ['unique', 'sparse', 'partialFilterExpression', 'expireAfterSeconds', 'collation'];

const sameKeys = (a: unknown[][] | null, b: unknown[][] | null) =>
  a === b || (!!a && !!b && a.length === b.length && a.every((t, i) => compareBson(t, b[i]) === 0));

export class Collection {
  readonly docs = new Map<string, Document>();
  readonly indexes = new Map<string, SecondaryIndex>();

  constructor(
    readonly dbName: string,
    readonly name: string,
    readonly options: Document = {},
  ) {
    this.indexes.set('_id_', new SecondaryIndex(ID_INDEX_SPEC));
  }

  get ns(): string {
    return `${this.dbName}.${this.name}`;
  }

  get(id: unknown): Document | undefined {
    return this.docs.get(idKey(id));
  }

  insert(doc: Document): void {
    if (Array.isArray(doc._id)) throw badValue(`can't use an array for _id`);
    const ik = idKey(doc._id);
    if (this.docs.has(ik)) throw this.indexes.get('_id_')!.duplicateKeyError(this.ns, [doc._id]);
    const keys = this.checkUnique(doc, ik);
    this.docs.set(ik, doc);
    for (const [name, index] of this.indexes) index.add(doc, ik, keys.get(name));
  }

  /** Replaces a stored document by a new version with the same `_id`. */
  replace(oldDoc: Document, newDoc: Document): void {
    const ik = idKey(oldDoc._id);
    const keys = this.checkUnique(newDoc, ik);
    for (const [name, index] of this.indexes) {
      const newKeys = keys.get(name) ?? null;
      const oldKeys = index.keysOf(oldDoc);
      if (sameKeys(oldKeys, newKeys)) continue;
      index.remove(oldDoc, ik);
      index.add(newDoc, ik, newKeys);
    }
    this.docs.set(ik, newDoc);
  }

  delete(doc: Document): void {
    const ik = idKey(doc._id);
    if (!this.docs.delete(ik)) return;
    for (const index of this.indexes.values()) index.remove(doc, ik);
  }

  /** Computes every index's keys for `doc` and throws the duplicate-key error of the first unique violation. */
  private checkUnique(doc: Document, ik: string): Map<string, unknown[][] | null> {
    const keys = new Map<string, unknown[][] | null>();
    for (const [name, index] of this.indexes) {
      const k = name === '_id_' ? [[doc._id]] : index.keysOf(doc);
      keys.set(name, k);
      const dup = index.conflict(k, ik);
      if (dup) throw index.duplicateKeyError(this.ns, dup);
    }
    return keys;
  }

  /** Creates an index; false when an identical one already exists. */
  createIndex(spec: Document): boolean {
    const key = spec.key as Document;
    if (!key || typeof key !== 'object' || Object.keys(key).length === 0) throw new MongoCommandError(67, 'index key pattern must be a non-empty object');
    if (typeof spec.name !== 'string' || !spec.name) throw new MongoCommandError(9, "The 'name' field is a required property of an index specification");
    const wanted: Document = { v: 2, ...spec };
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
    const index = new SecondaryIndex(wanted);
    for (const [ik, doc] of this.docs) {
      const keys = index.keysOf(doc);
      const dup = index.conflict(keys, ik);
      if (dup) throw index.duplicateKeyError(this.ns, dup);
      index.add(doc, ik, keys);
    }
    this.indexes.set(index.name, index);
    return true;
  }

  dropIndex(name: string): void {
    if (name === '_id_') throw new MongoCommandError(72, 'cannot drop _id index');
    if (!this.indexes.delete(name)) throw new MongoCommandError(27, `index not found with name [${name}]`);
  }

  findIndexByKey(key: Document): SecondaryIndex | undefined {
    return [...this.indexes.values()].find((ix) => compareBson(ix.spec.key, key) === 0);
  }
}

function sameOptions(a: Document, b: Document): boolean {
  const norm = (spec: Document, o: string) => (o === 'unique' || o === 'sparse' ? spec[o] === true : (spec[o] ?? null));
  return COMPARED_OPTIONS.every((o) => compareBson(norm(a, o), norm(b, o)) === 0);
}
