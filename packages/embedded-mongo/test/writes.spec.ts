import { describe, expect, it } from '@jest/globals';
import { Long, MongoBulkWriteError, MongoServerError, ObjectId } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: writes', () => {
  const fx = engineFixture('writes');

  it('update operators: $set, $inc, $unset, $push, $addToSet, $pull, nested paths', async () => {
    const c = fx.db.collection<Loose>('ops');
    const { insertedId } = await c.insertOne({ n: 1, tags: ['a'], nested: { x: 1 }, gone: true });
    await c.updateOne({ _id: insertedId }, { $set: { 'nested.y': 2, title: 't' }, $inc: { n: 5 }, $unset: { gone: '' } });
    await c.updateOne({ _id: insertedId }, { $push: { tags: { $each: ['b', 'c'] } } } as never);
    await c.updateOne({ _id: insertedId }, { $addToSet: { tags: { $each: ['a', 'd'] } } });
    await c.updateOne({ _id: insertedId }, { $pull: { tags: { $in: ['b'] } } } as never);
    expect(await c.findOne({ _id: insertedId })).toEqual({ _id: insertedId, n: 6, tags: ['a', 'c', 'd'], nested: { x: 1, y: 2 }, title: 't' });
    const noop = await c.updateOne({ _id: insertedId }, { $set: { n: 6 } });
    expect(noop).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    await expect(c.updateOne({ _id: insertedId }, { $frobnicate: { n: 1 } } as never)).rejects.toMatchObject({ code: 9, message: expect.stringContaining('$frobnicate') });
    await expect(c.updateOne({ _id: insertedId }, { $set: { _id: new ObjectId() } })).rejects.toMatchObject({ code: 66 });
  });

  it('update operators fail like MongoDB on values of the wrong type, and do arithmetic on Long', async () => {
    const c = fx.db.collection<Loose>('typed');
    await c.insertOne({ _id: 1, s: 'text', n: 5, big: Long.fromString('9007199254740993') });
    await expect(c.updateOne({ _id: 1 }, { $inc: { s: 1 } })).rejects.toMatchObject({ code: 14 });
    await expect(c.updateOne({ _id: 1 }, { $push: { s: 1 } } as never)).rejects.toMatchObject({ code: 2, message: expect.stringContaining('must be an array') });
    await expect(c.updateOne({ _id: 1 }, { $set: { 'n.deep': 1 } })).rejects.toMatchObject({ code: 28 });
    await expect(c.updateOne({ _id: 1 }, { $inc: { n: 'x' } } as never)).rejects.toMatchObject({ code: 14 });
    await c.updateOne({ _id: 1 }, { $inc: { big: 2, n: Long.fromNumber(1) } });
    const back = await c.findOne({ _id: 1 }, { promoteLongs: false });
    expect(back?.big).toEqual(Long.fromString('9007199254740995'));
    expect(back?.n).toEqual(Long.fromNumber(6));
    expect(back?.s).toBe('text');
  });

  it('multi updates, replacement, arrayFilters and the positional operator', async () => {
    const c = fx.db.collection<Loose>('multi');
    await c.insertMany([
      { _id: 1, g: 'x', items: [{ k: 1, v: 0 }, { k: 2, v: 0 }] },
      { _id: 2, g: 'x', items: [{ k: 2, v: 0 }] },
      { _id: 3, g: 'y', items: [] },
    ]);
    expect(await c.updateMany({ g: 'x' }, { $set: { seen: true } })).toMatchObject({ matchedCount: 2, modifiedCount: 2 });
    await c.updateMany({}, { $set: { 'items.$[it].v': 7 } }, { arrayFilters: [{ 'it.k': 2 }] });
    await c.updateOne({ _id: 1, 'items.k': 1 }, { $inc: { 'items.$.v': 3 } });
    expect((await c.findOne({ _id: 1 }))?.items).toEqual([{ k: 1, v: 3 }, { k: 2, v: 7 }]);
    expect((await c.findOne({ _id: 2 }))?.items).toEqual([{ k: 2, v: 7 }]);
    await c.replaceOne({ _id: 3 }, { g: 'z' });
    expect(await c.findOne({ _id: 3 })).toEqual({ _id: 3, g: 'z' });
    await c.updateOne({ _id: 3 }, [{ $set: { copy: '$g' } }]);
    expect(await c.findOne({ _id: 3 })).toEqual({ _id: 3, g: 'z', copy: 'z' });
  });

  it('upserts seed the new document from the filter equalities', async () => {
    const c = fx.db.collection<Loose>('upserts');
    const companyId = new ObjectId();
    const r = await c.updateOne({ companyId, key: 'k1', n: { $gt: 5 } }, { $set: { v: 1 }, $setOnInsert: { created: true } }, { upsert: true });
    expect(r).toMatchObject({ matchedCount: 0, upsertedCount: 1 });
    expect(r.upsertedId).toBeInstanceOf(ObjectId);
    expect(await c.findOne({ _id: r.upsertedId! })).toEqual({ _id: r.upsertedId, companyId, key: 'k1', v: 1, created: true });
    const again = await c.updateOne({ companyId, key: 'k1' }, { $set: { v: 2 }, $setOnInsert: { created: false } }, { upsert: true });
    expect(again).toMatchObject({ matchedCount: 1, modifiedCount: 1, upsertedCount: 0 });
    expect((await c.findOne({ key: 'k1' }))?.created).toBe(true);
    await c.updateOne({ _id: 'fixed' }, { $set: { v: 3 } }, { upsert: true });
    expect(await c.findOne({ _id: 'fixed' as never })).toEqual({ _id: 'fixed', v: 3 });
  });

  it('findOneAndUpdate honors returnDocument, sort, projection and upsert; findOneAndDelete', async () => {
    const c = fx.db.collection<Loose>('fam');
    await c.insertMany([{ q: 1, p: 1 }, { q: 1, p: 2 }, { q: 1, p: 3 }]);
    const before = await c.findOneAndUpdate({ q: 1 }, { $inc: { p: 10 } }, { sort: { p: -1 }, returnDocument: 'before', projection: { _id: 0 } });
    expect(before).toEqual({ q: 1, p: 3 });
    const after = await c.findOneAndUpdate({ q: 1 }, { $inc: { p: 10 } }, { sort: { p: 1 }, returnDocument: 'after', projection: { _id: 0 } });
    expect(after).toEqual({ q: 1, p: 11 });
    const raw = await c.findOneAndUpdate({ q: 2 }, { $set: { p: 0 } }, { upsert: true, returnDocument: 'after', includeResultMetadata: true });
    expect(raw.lastErrorObject).toMatchObject({ n: 1, updatedExisting: false });
    expect(raw.lastErrorObject?.upserted).toBeInstanceOf(ObjectId);
    expect(raw.value).toMatchObject({ q: 2, p: 0 });
    const missing = await c.findOneAndUpdate({ q: 99 }, { $set: { p: 0 } }, { includeResultMetadata: true });
    expect(missing).toMatchObject({ value: null, lastErrorObject: { n: 0, updatedExisting: false } });
    const replaced = await c.findOneAndReplace({ q: 2 }, { q: 3 }, { returnDocument: 'after' });
    expect(replaced).toMatchObject({ q: 3 });
    expect(await c.findOneAndDelete({ q: 3 })).toMatchObject({ q: 3 });
    expect(await c.countDocuments({ q: 3 })).toBe(0);
  });

  it('deletes one or many', async () => {
    const c = fx.db.collection<Loose>('deletes');
    await c.insertMany([{ k: 1 }, { k: 1 }, { k: 2 }]);
    expect((await c.deleteOne({ k: 1 })).deletedCount).toBe(1);
    expect((await c.deleteMany({})).deletedCount).toBe(2);
  });

  it('unique indexes reject duplicates on insert, update and upsert with MongoDB error details', async () => {
    const c = fx.db.collection<Loose>('uniq');
    await c.createIndex({ email: 1 }, { unique: true });
    await c.createIndex({ companyId: 1, slug: 1 }, { unique: true });
    const companyId = new ObjectId();
    await c.insertOne({ _id: 'u1' as never, email: 'a@x.io', companyId, slug: 's1' });
    await c.insertOne({ _id: 'u2' as never, email: 'b@x.io', companyId, slug: 's2' });

    const err = await c.insertOne({ email: 'a@x.io' }).catch((e: MongoServerError) => e);
    expect(err).toBeInstanceOf(MongoServerError);
    expect(err).toMatchObject({ code: 11000, keyPattern: { email: 1 }, keyValue: { email: 'a@x.io' } });
    expect((err as MongoServerError).message).toBe('E11000 duplicate key error collection: writes.uniq index: email_1 dup key: { email: "a@x.io" }');

    await expect(c.updateOne({ _id: 'u2' as never }, { $set: { email: 'a@x.io', other: 1 } })).rejects.toMatchObject({ code: 11000 });
    expect(await c.findOne({ _id: 'u2' as never })).toEqual({ _id: 'u2', email: 'b@x.io', companyId, slug: 's2' });
    await expect(c.updateOne({ email: 'new@x.io' }, { $set: { companyId, slug: 's1' } }, { upsert: true })).rejects.toMatchObject({
      code: 11000,
      keyPattern: { companyId: 1, slug: 1 },
      keyValue: { companyId, slug: 's1' },
    });
    await expect(c.findOneAndUpdate({ _id: 'u2' as never }, { $set: { slug: 's1' } })).rejects.toMatchObject({ code: 11000 });
    await expect(c.insertOne({ _id: 'u1' as never })).rejects.toMatchObject({ code: 11000, keyPattern: { _id: 1 }, keyValue: { _id: 'u1' } });
    await expect(c.createIndex({ companyId: 1 }, { unique: true })).rejects.toMatchObject({ code: 11000 });
    expect(await c.countDocuments()).toBe(2);
  });

  it('ordered and unordered inserts report writeErrors with their index', async () => {
    const c = fx.db.collection<Loose>('bulk');
    await c.createIndex({ k: 1 }, { unique: true });
    const ordered = await c.insertMany([{ k: 1 }, { k: 1 }, { k: 2 }]).catch((e: MongoBulkWriteError) => e);
    expect(ordered).toBeInstanceOf(MongoBulkWriteError);
    expect((ordered as MongoBulkWriteError).insertedCount).toBe(1);
    expect((ordered as MongoBulkWriteError).writeErrors).toMatchObject([{ index: 1, code: 11000 }]);
    const unordered = await c.insertMany([{ k: 1 }, { k: 3 }, { k: 3 }, { k: 4 }], { ordered: false }).catch((e: MongoBulkWriteError) => e);
    expect((unordered as MongoBulkWriteError).insertedCount).toBe(2);
    expect(((unordered as MongoBulkWriteError).writeErrors as unknown as { index: number }[]).map((e) => e.index)).toEqual([0, 2]);
    expect((await c.find({}).sort({ k: 1 }).toArray()).map((d) => d.k)).toEqual([1, 3, 4]);
  });

  it('sparse and partial unique indexes only constrain the documents they cover', async () => {
    const c = fx.db.collection<Loose>('partial');
    await c.createIndex({ phone: 1 }, { unique: true, sparse: true });
    await c.createIndex({ companyId: 1, email: 1 }, { unique: true, partialFilterExpression: { email: { $type: 'string' } } });
    const companyId = new ObjectId();
    await c.insertMany([{ companyId }, { companyId }, { companyId, email: 'a@x.io' }, { phone: '1' }]);
    await expect(c.insertOne({ companyId, email: 'a@x.io' })).rejects.toMatchObject({ code: 11000 });
    await expect(c.insertOne({ phone: '1' })).rejects.toMatchObject({ code: 11000 });
    await c.insertOne({ companyId: new ObjectId(), email: 'a@x.io' });
    expect(await c.countDocuments({ companyId })).toBe(3);
    expect(await c.countDocuments({ phone: '1' })).toBe(1);
  });

  it('keeps stored documents isolated from later writes and from what clients receive', async () => {
    const c = fx.db.collection<Loose>('isolation');
    await c.insertOne({ _id: 1 as never, list: [1, 2], sub: { a: 1 } });
    const cursor = c.find({}).batchSize(1);
    await c.insertMany([{ _id: 2 as never }, { _id: 3 as never }]);
    const first = await cursor.next();
    first!.list.push(3);
    await c.updateOne({ _id: 1 as never }, { $push: { list: 9 } } as never);
    expect((await c.findOne({ _id: 1 as never }))?.list).toEqual([1, 2, 9]);
    await cursor.close();
  });

  /**
   * Regression (found by the app): findAndModify with `new: true` and `fields` must answer the updated document
   * even when the update changes a field the query filters on. Mongoose always sends `fields` for a schema with a
   * `select: false` path (agents' passwordHash), so { _id, isActive: true } → { isActive: false } used to look like
   * "no match": the projection re-applied the filter to the post-image.
   */
  it.each([
    ['an exclusion projection', { secret: 0 }],
    ['an inclusion projection', { flag: 1 }],
  ])('answers the updated document with %s when the update changes a filtered field', async (_name, projection) => {
    const collection = fx.db.collection(`agents_${Object.values(projection)[0]}`);
    const { insertedId } = await collection.insertOne({ flag: true, secret: 's' });

    const updated = await collection.findOneAndUpdate(
      { _id: insertedId, flag: true },
      { $set: { flag: false } },
      { returnDocument: 'after', projection },
    );

    expect(await collection.findOne({ _id: insertedId })).toMatchObject({ flag: false });
    expect(updated).toMatchObject({ _id: insertedId, flag: false });
  });

  /**
   * Regression (found by the app): `$push` with `$each` and `$slice` on a field the document does not have yet
   * must apply `$slice` to the array it creates: `{ $push: { a: { $each: [1, 2, 3], $slice: -2 } } }` stores
   * `[2, 3]`, as MongoDB does (mingo alone stores `[1, 2, 3]`).
   */
  it('applies $slice when $push creates the array', async () => {
    const collection = fx.db.collection('push_slice');
    const { insertedId } = await collection.insertOne({});
    await collection.updateOne({ _id: insertedId }, { $push: { a: { $each: [1, 2, 3], $slice: -2 } } } as never);
    expect(await collection.findOne({ _id: insertedId })).toEqual({ _id: insertedId, a: [2, 3] });
  });

  it('leaves $push through an array element and an empty $each without modifiers as they were', async () => {
    const collection = fx.db.collection<Loose>('push_through_array');
    const { insertedId } = await collection.insertOne({ lines: [{ tags: ['y'] }, { tags: ['z'] }] });
    await collection.updateOne({ _id: insertedId }, { $push: { 'lines.0.tags': { $each: ['x'], $slice: -5 } } } as never);
    expect(await collection.findOne({ _id: insertedId })).toEqual({ _id: insertedId, lines: [{ tags: ['y', 'x'] }, { tags: ['z'] }] });

    const empty = await collection.insertOne({});
    const pushed = await collection.updateOne({ _id: empty.insertedId }, { $push: { a: { $each: [] } } } as never);
    expect(pushed.modifiedCount).toBe(1);
    expect(await collection.findOne({ _id: empty.insertedId })).toEqual({ _id: empty.insertedId, a: [] });

    const sliced = await collection.insertOne({});
    const created = await collection.updateOne({ _id: sliced.insertedId }, { $push: { 'n.a': { $each: [], $slice: 1 } } } as never);
    expect(created.modifiedCount).toBe(1);
    expect(await collection.findOne({ _id: sliced.insertedId })).toEqual({ _id: sliced.insertedId, n: { a: [] } });
  });

  it('applies $slice to an existing array (control)', async () => {
    const collection = fx.db.collection('push_slice_existing');
    const { insertedId } = await collection.insertOne({ a: [0] });
    await collection.updateOne({ _id: insertedId }, { $push: { a: { $each: [1, 2, 3], $slice: -2 } } } as never);
    expect(await collection.findOne({ _id: insertedId })).toEqual({ _id: insertedId, a: [2, 3] });
  });
});
