import { describe, expect, it, jest } from '@jest/globals';
import { calculateObjectSize, Double, type Document } from 'bson';
import { checkSize } from '../src/commands/validation.js';
import { applyUpdate } from '../src/query/update.js';
import { UNRECORDED } from '../src/storage/changes.js';
import { Collection } from '../src/storage/collection.js';
import type { SecondaryIndex } from '../src/storage/secondary-index.js';
import { MAX_BSON_SIZE } from '../src/wire-protocol.js';

/** A scratch collection with the given index specs (name: the key's fields joined). */
function collectionWith(...specs: Document[]): Collection {
  const coll = new Collection('db', 'c', {}, UNRECORDED);
  for (const spec of specs) coll.createIndex({ name: Object.keys(spec.key as Document).join('_'), ...spec });
  return coll;
}

function index(coll: Collection, name: string): SecondaryIndex {
  return coll.indexes.get(name) as SecondaryIndex;
}

/** An index's entries in order, as [key tuple, _id]. */
function entries(coll: Collection, name: string): unknown[][] {
  const list = index(coll, name).entries;
  return [...list.range({ b: 0, i: 0 }, list.end, false)].map((e) => [e.k, e.id]);
}

/** What the engine stores for an operator update of `doc`. */
function updated(doc: Document, update: Document): Document {
  return applyUpdate(doc, update, 'operators', { inserting: false, readCollection: () => [] }).doc;
}

describe('embedded engine: index maintenance on update', () => {
  it('keeps the untouched top-level fields of the stored document, copies the touched ones', () => {
    const doc = { _id: 1, a: { b: 1, c: [1, 2] }, tags: ['x'], meta: { n: 1 } };
    const next = updated(doc, { $set: { 'a.b': 2 }, $push: { tags: 'y' } });
    expect(next).toEqual({ _id: 1, a: { b: 2, c: [1, 2] }, tags: ['x', 'y'], meta: { n: 1 } });
    expect(next.meta).toBe(doc.meta);
    expect(next.a).not.toBe(doc.a);
    expect(doc).toEqual({ _id: 1, a: { b: 1, c: [1, 2] }, tags: ['x'], meta: { n: 1 } });
    const renamed = updated(doc, { $rename: { 'a.b': 'moved.b' } });
    expect(renamed).toEqual({ _id: 1, a: { c: [1, 2] }, tags: ['x'], meta: { n: 1 }, moved: { b: 1 } });
    expect(doc.a).toEqual({ b: 1, c: [1, 2] });
  });

  it('applies a plain $push itself as MongoDB does, and leaves modifiers to the updater', () => {
    const doc = { _id: 1, list: [1], s: 'x', rows: [{ tags: ['a'] }] };
    expect(updated(doc, { $push: { list: 2, 'n.created': { v: 1 } } })).toEqual({ ...doc, list: [1, 2], n: { created: [{ v: 1 }] } });
    expect(updated(doc, { $push: { list: { $each: [2, [3]] }, 'rows.0.tags': 'b', empty: { $each: [] } } })).toEqual({
      ...doc,
      list: [1, 2, [3]],
      rows: [{ tags: ['a', 'b'] }],
      empty: [],
    });
    expect(updated(doc, { $push: { list: { $each: [5, 0], $sort: 1 } } }).list).toEqual([0, 1, 5]);
    expect(doc).toEqual({ _id: 1, list: [1], s: 'x', rows: [{ tags: ['a'] }] });
    expect(() => updated(doc, { $push: { s: 1 } })).toThrow(expect.objectContaining({ code: 2 }));
    expect(() => updated(doc, { $push: { 's.t': 1 } })).toThrow(expect.objectContaining({ code: 28 }));
    expect(() => updated(doc, { $push: { 'rows.tags': 1 } })).toThrow(expect.objectContaining({ code: 28 }));
  });

  it('computes no keys for the indexes whose fields an update did not change', () => {
    const coll = collectionWith({ key: { status: 1 } }, { key: { 'items.sku': 1 } }, { key: { 'attributes.$**': 1 } });
    const doc = { _id: 1, status: 'queued', items: [{ sku: 'a' }], attributes: { plan: 'pro' }, n: 1 };
    coll.insert(doc);
    const untouched = [index(coll, 'items.sku'), index(coll, 'attributes.$**'), coll.idIndex!].map((ix) => jest.spyOn(ix, 'keysOf'));
    const touched = jest.spyOn(index(coll, 'status'), 'keysOf');
    coll.replace(doc, updated(doc, { $set: { status: 'human' }, $inc: { n: 1 } }));
    for (const spy of untouched) expect(spy).not.toHaveBeenCalled();
    expect(touched).toHaveBeenCalled();
    expect(entries(coll, 'status')).toEqual([[['human'], 1]]);
    expect(entries(coll, 'items.sku')).toEqual([[['a'], 1]]);
  });

  it('updates the entries of a path inside an array', () => {
    const coll = collectionWith({ key: { 'items.sku': 1 } });
    const doc = { _id: 1, items: [{ sku: 'a' }, { sku: 'b' }] };
    coll.insert(doc);
    const next = updated(doc, { $set: { 'items.1.sku': 'c' } });
    coll.replace(doc, next);
    expect(entries(coll, 'items.sku')).toEqual([
      [['a'], 1],
      [['c'], 1],
    ]);
    coll.replace(next, updated(next, { $pull: { items: { sku: 'a' } } }));
    expect(entries(coll, 'items.sku')).toEqual([[['c'], 1]]);
  });

  it('touches only the keys that differ: a push adds one entry, a key equal in order but not in type is replaced', () => {
    const coll = collectionWith({ key: { 'held.at': 1 } });
    const doc = { _id: 1, held: [{ at: 1 }, { at: 2 }, { at: 3 }] };
    coll.insert(doc);
    const stored = () => {
      const list = index(coll, 'held.at').entries;
      return [...list.range({ b: 0, i: 0 }, list.end, false)];
    };
    const before = stored();
    const pushed = updated(doc, { $push: { held: { at: 4 } } });
    coll.replace(doc, pushed);
    const after = stored();
    expect(after.map((e) => e.k)).toEqual([[1], [2], [3], [4]]);
    // The three entries that stayed are the very ones stored before.
    expect(after.slice(0, 3).every((entry, i) => entry === before[i])).toBe(true);
    coll.replace(pushed, updated(pushed, { $set: { 'held.1.at': 2.5, 'held.2.at': new Double(3) } }));
    const retyped = stored();
    expect(retyped.map((e) => e.k)).toEqual([[1], [2.5], [new Double(3)], [4]]);
    expect(retyped[2].k[0]).toBeInstanceOf(Double);
  });

  it('updates the entries of a wildcard subtree, and only for a change under it', () => {
    const coll = collectionWith({ key: { companyId: 1, 'attributes.$**': 1 } });
    const doc = { _id: 1, companyId: 7, attributes: { plan: { tier: 'silver' }, seats: 3 }, note: 'x' };
    coll.insert(doc);
    const next = updated(doc, { $set: { 'attributes.plan.tier': 'gold' } });
    coll.replace(doc, next);
    expect(entries(coll, 'companyId_attributes.$**')).toEqual([
      [[7, 'attributes.plan.tier', 'gold'], 1],
      [[7, 'attributes.seats', 3], 1],
    ]);
    const spy = jest.spyOn(index(coll, 'companyId_attributes.$**'), 'keysOf');
    coll.replace(next, updated(next, { $set: { note: 'y' } }));
    expect(spy).not.toHaveBeenCalled();
    expect(entries(coll, 'companyId_attributes.$**')).toHaveLength(2);
  });

  it('adds and removes a document from a partial index when only its filter field changes', () => {
    const coll = collectionWith({ key: { k: 1 }, partialFilterExpression: { $or: [{ flag: true }, { 'sub.on': true }] } });
    const doc = { _id: 1, k: 5, flag: false, sub: { on: false } };
    coll.insert(doc);
    expect(entries(coll, 'k')).toEqual([]);
    const flagged = updated(doc, { $set: { flag: true } });
    coll.replace(doc, flagged);
    expect(entries(coll, 'k')).toEqual([[[5], 1]]);
    const unflagged = updated(flagged, { $set: { flag: false } });
    coll.replace(flagged, unflagged);
    expect(entries(coll, 'k')).toEqual([]);
    coll.replace(unflagged, updated(unflagged, { $set: { 'sub.on': true } }));
    expect(entries(coll, 'k')).toEqual([[[5], 1]]);
  });

  it('refuses a unique key changed to a duplicate, through its key or its partial filter, leaving the document as it was', () => {
    const coll = collectionWith({ key: { email: 1 }, unique: true, partialFilterExpression: { open: true } });
    const a = { _id: 1, email: 'a@x', open: true };
    const b = { _id: 2, email: 'b@x', open: true };
    const closed = { _id: 3, email: 'a@x', open: false };
    for (const doc of [a, b, closed]) coll.insert(doc);
    expect(() => coll.replace(b, updated(b, { $set: { email: 'a@x' } }))).toThrow(expect.objectContaining({ code: 11000 }));
    expect(() => coll.replace(closed, updated(closed, { $set: { open: true } }))).toThrow(expect.objectContaining({ code: 11000 }));
    expect(coll.get(2)).toBe(b);
    expect(coll.get(3)).toBe(closed);
    expect(entries(coll, 'email')).toEqual([
      [['a@x'], 1],
      [['b@x'], 2],
    ]);
    // A change elsewhere in a document whose key stays is no conflict.
    const renamed = updated(b, { $set: { name: 'B' } });
    coll.replace(b, renamed);
    expect(coll.get(2)).toBe(renamed);
  });

  it('reads every field for a root wildcard index and a partial filter on an expression', () => {
    const coll = collectionWith({ key: { '$**': 1 } }, { key: { k: 1 }, partialFilterExpression: { $expr: { $gt: ['$n', 1] } } });
    expect(index(coll, '$**').reads).toBeNull();
    expect(index(coll, 'k').reads).toBeNull();
    const doc = { _id: 1, k: 1, n: 1 };
    coll.insert(doc);
    coll.replace(doc, updated(doc, { $set: { n: 2 } }));
    expect(entries(coll, 'k')).toEqual([[[1], 1]]);
    expect(entries(coll, '$**')).toEqual([
      [['k', 1], 1],
      [['n', 2], 1],
    ]);
  });

  it("measures an update's result from its previous version's size, to the byte", () => {
    const first = { _id: 1, big: 'x'.repeat(MAX_BSON_SIZE - 1000), gone: 'g', arr: [1, 2] };
    const second = updated(first, { $set: { n: 1 } });
    checkSize(second, false, first);
    const base = calculateObjectSize(updated(second, { $unset: { gone: '' }, $push: { arr: 3 } }));
    // A string field `pad` takes 10 bytes besides its characters (type, name, length, terminator).
    const fits = updated(second, { $unset: { gone: '' }, $push: { arr: 3 }, $set: { pad: 'p'.repeat(MAX_BSON_SIZE - base - 10) } });
    expect(calculateObjectSize(fits)).toBe(MAX_BSON_SIZE);
    expect(() => checkSize(fits, false, second)).not.toThrow();
    const over = updated(second, { $unset: { gone: '' }, $push: { arr: 3 }, $set: { pad: 'p'.repeat(MAX_BSON_SIZE - base - 9) } });
    expect(() => checkSize(over, false, second)).toThrow(expect.objectContaining({ code: 17419 }));
    const next = updated(fits, { $set: { pad: 'short' } });
    expect(() => checkSize(next, false, fits)).not.toThrow();
    expect(() => checkSize(updated(next, { $set: { big: 'x'.repeat(MAX_BSON_SIZE) } }), false, next)).toThrow(
      expect.objectContaining({ code: 17419 }),
    );
  });
});
