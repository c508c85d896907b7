import { beforeAll, describe, expect, it } from '@jest/globals';
import { Binary, Decimal128, Long, ObjectId, type Collection, type Document } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: reads', () => {
  const fx = engineFixture('reads');
  let people: Collection<Loose>;
  const companyA = new ObjectId();
  const companyB = new ObjectId();

  beforeAll(async () => {
    people = fx.db.collection<Loose>('people');
    await people.insertMany([
      { _id: 1, name: 'Ada', age: 36, companyId: companyA, tags: ['math', 'code'], address: { city: 'London' }, scores: [{ k: 'a', v: 5 }, { k: 'b', v: 9 }] },
      { _id: 2, name: 'bob', age: 25, companyId: companyA, tags: ['code'], address: { city: 'Paris' }, scores: [{ k: 'a', v: 2 }] },
      { _id: 3, name: 'Cy', age: 25, companyId: companyB, tags: [], address: null, scores: [] },
      { _id: 4, name: 'Dee', age: null, companyId: companyB, tags: ['art', 'math'] },
      { _id: 5, name: 'eve', companyId: companyA, nickname: 'E' },
    ]);
  });

  const ids = async (filter: Document, sort: Document = { _id: 1 }) => (await people.find(filter).sort(sort).toArray()).map((d) => d._id);

  it('comparison operators', async () => {
    expect(await ids({ age: 25 })).toEqual([2, 3]);
    expect(await ids({ age: { $eq: 36 } })).toEqual([1]);
    expect(await ids({ age: { $ne: 25 } })).toEqual([1, 4, 5]);
    expect(await ids({ age: { $gt: 25 } })).toEqual([1]);
    expect(await ids({ age: { $gte: 25, $lt: 36 } })).toEqual([2, 3]);
    expect(await ids({ age: { $lte: 25 } })).toEqual([2, 3]);
    expect(await ids({ age: { $in: [36, null] } })).toEqual([1, 4, 5]);
    expect(await ids({ age: { $nin: [25, 36] } })).toEqual([4, 5]);
    expect(await ids({ companyId: companyA })).toEqual([1, 2, 5]);
    expect(await ids({ companyId: { $in: [companyB, new ObjectId()] } })).toEqual([3, 4]);
    expect(await ids({ name: { $gt: 'Z' } })).toEqual([2, 5]);
  });

  it('logical operators', async () => {
    expect(await ids({ $or: [{ age: 36 }, { name: 'eve' }] })).toEqual([1, 5]);
    expect(await ids({ $and: [{ age: { $gte: 25 } }, { companyId: companyA }] })).toEqual([1, 2]);
    expect(await ids({ $nor: [{ age: 25 }, { companyId: companyA }] })).toEqual([4]);
    expect(await ids({ age: { $not: { $gt: 30 } } })).toEqual([2, 3, 4, 5]);
  });

  it('element operators and null versus missing', async () => {
    expect(await ids({ nickname: { $exists: true } })).toEqual([5]);
    expect(await ids({ age: { $exists: false } })).toEqual([5]);
    expect(await ids({ age: null })).toEqual([4, 5]);
    expect(await ids({ age: { $type: 'null' } })).toEqual([4]);
    expect(await ids({ companyId: { $type: 'objectId' } })).toEqual([1, 2, 3, 4, 5]);
    expect(await ids({ tags: { $type: 'array' } })).toEqual([1, 2, 3, 4]);
    expect(await ids({ age: { $type: 'number' } })).toEqual([1, 2, 3]);
    const eve = await people.findOne({ _id: 5 });
    expect(eve).not.toHaveProperty('age');
    expect((await people.findOne({ _id: 4 }))?.age).toBeNull();
  });

  it('$regex with options, and regular expression values', async () => {
    expect(await ids({ name: { $regex: '^[a-c]', $options: 'i' } })).toEqual([1, 2, 3]);
    expect(await ids({ name: { $regex: '^[a-c]' } })).toEqual([2]);
    expect(await ids({ name: /E$/i })).toEqual([4, 5]);
    expect(await ids({ name: { $in: [/^a/i, 'bob'] } })).toEqual([1, 2]);
  });

  it('array operators: equality on elements, $in, $all, $size, $elemMatch', async () => {
    expect(await ids({ tags: 'math' })).toEqual([1, 4]);
    expect(await ids({ tags: { $in: ['art', 'code'] } })).toEqual([1, 2, 4]);
    expect(await ids({ tags: { $all: ['math', 'code'] } })).toEqual([1]);
    expect(await ids({ tags: { $size: 0 } })).toEqual([3]);
    expect(await ids({ scores: { $elemMatch: { k: 'a', v: { $gte: 5 } } } })).toEqual([1]);
    expect(await ids({ 'scores.v': { $gt: 8 } })).toEqual([1]);
    expect(await ids({ 'address.city': 'Paris' })).toEqual([2]);
  });

  it('unknown query operators are errors, not empty results', async () => {
    await expect(people.find({ age: { $foo: 1 } }).toArray()).rejects.toMatchObject({ code: 2, message: expect.stringContaining('$foo') });
    await expect(people.find({ $foo: [] }).toArray()).rejects.toMatchObject({ code: 2 });
    await expect(people.countDocuments({ age: { $near: [0, 0] } })).rejects.toMatchObject({ code: 2 });
  });

  it('projection: inclusion, exclusion, nested, $slice and $elemMatch', async () => {
    expect(await people.findOne({ _id: 1 }, { projection: { name: 1 } })).toEqual({ _id: 1, name: 'Ada' });
    expect(await people.findOne({ _id: 1 }, { projection: { name: 1, _id: 0, 'address.city': 1 } })).toEqual({ name: 'Ada', address: { city: 'London' } });
    const excluded = await people.findOne({ _id: 2 }, { projection: { scores: 0, tags: 0, address: 0 } });
    expect(excluded).toEqual({ _id: 2, name: 'bob', age: 25, companyId: companyA });
    expect(await people.findOne({ _id: 1 }, { projection: { tags: { $slice: 1 }, name: 1 } })).toEqual({ _id: 1, name: 'Ada', tags: ['math'] });
    expect(await people.findOne({ _id: 1 }, { projection: { scores: { $elemMatch: { k: 'b' } } } })).toEqual({ _id: 1, scores: [{ k: 'b', v: 9 }] });
  });

  it('sort with ties broken by _id, in both directions, with skip and limit', async () => {
    expect(await ids({}, { age: 1, _id: 1 })).toEqual([4, 5, 2, 3, 1]);
    expect(await ids({}, { age: -1, _id: -1 })).toEqual([1, 3, 2, 5, 4]);
    expect(await ids({}, { age: 1, _id: -1 })).toEqual([5, 4, 3, 2, 1]);
    expect(await ids({}, { 'address.city': 1, _id: 1 })).toEqual([3, 4, 5, 1, 2]);
    const page = await people.find({}).sort({ age: -1, _id: 1 }).skip(1).limit(2).toArray();
    expect(page.map((d) => d._id)).toEqual([2, 3]);
    expect((await people.find({}).sort({ $natural: -1 }).limit(2).toArray()).map((d) => d._id)).toEqual([5, 4]);
  });

  it('counts and distinct values', async () => {
    expect(await people.countDocuments({ companyId: companyA })).toBe(3);
    expect(await people.countDocuments({}, { skip: 1, limit: 2 })).toBe(2);
    expect(await people.estimatedDocumentCount()).toBe(5);
    expect(await people.distinct('tags')).toEqual(['art', 'code', 'math']);
    expect(await people.distinct('age', { companyId: companyB })).toEqual([null, 25]);
    expect(await people.distinct('address.city')).toEqual(['London', 'Paris']);
  });

  it('cursors span several getMore batches and can be killed', async () => {
    const many = fx.db.collection<Loose>('many');
    await many.insertMany(Array.from({ length: 250 }, (_, i) => ({ i })));
    const seen: number[] = [];
    const cursor = many.find({}).sort({ i: 1 }).batchSize(40);
    for await (const doc of cursor) seen.push(doc.i as number);
    expect(seen).toEqual(Array.from({ length: 250 }, (_, i) => i));

    const first = await fx.db.command({ find: 'many', filter: {}, batchSize: 10 }, { promoteLongs: false });
    expect(first.cursor.firstBatch).toHaveLength(10);
    expect(first.cursor.id).toBeInstanceOf(Long);
    expect(first.cursor.id.isZero()).toBe(false);
    const next = await fx.db.command({ getMore: first.cursor.id, collection: 'many', batchSize: 100 }, { promoteLongs: false });
    expect(next.cursor.nextBatch).toHaveLength(100);
    expect(next.cursor.nextBatch[0].i).toBe(first.cursor.firstBatch[9].i + 1);
    const killed = await fx.db.command({ killCursors: 'many', cursors: [first.cursor.id, Long.fromNumber(12345)] }, { promoteLongs: false });
    expect(killed.cursorsKilled).toEqual([first.cursor.id]);
    expect(killed.cursorsNotFound).toEqual([Long.fromNumber(12345)]);
    await expect(fx.db.command({ getMore: first.cursor.id, collection: 'many' })).rejects.toMatchObject({ code: 43 });

    const defaultBatch = await fx.db.command({ find: 'many', filter: {} }, { promoteLongs: false });
    expect(defaultBatch.cursor.firstBatch).toHaveLength(101);
    const rest = await fx.db.command({ getMore: defaultBatch.cursor.id, collection: 'many' }, { promoteLongs: false });
    expect(rest.cursor.nextBatch).toHaveLength(149);
    expect(rest.cursor.id.isZero()).toBe(true);
    const limited = await many.find({}).limit(5).batchSize(2).toArray();
    expect(limited).toHaveLength(5);
  });

  it('a batch stops before 16 MiB of documents; a getMore carries the rest', async () => {
    const big = fx.db.collection<Loose>('big');
    const text = 'x'.repeat(6 * 1024 * 1024);
    await big.insertMany(Array.from({ length: 4 }, (_, i) => ({ _id: i as never, text })));
    const first = await fx.db.command({ find: 'big', filter: {}, sort: { _id: 1 } }, { promoteLongs: false });
    expect(first.cursor.firstBatch.map((d: Loose) => [d._id, d.text.length])).toEqual([
      [0, text.length],
      [1, text.length],
    ]);
    const rest = await fx.db.command({ getMore: first.cursor.id, collection: 'big' }, { promoteLongs: false });
    expect(rest.cursor.nextBatch.map((d: Loose) => d._id)).toEqual([2, 3]);
    expect(rest.cursor.id.isZero()).toBe(true);
  });

  it('a projection of top-level fields answers as the general projection does', async () => {
    const c = fx.db.collection<Loose>('projected');
    await c.insertMany([
      { _id: 1 as never, phone: '+1', name: 'Ada', nested: { a: 1 }, list: [1, 2], email: null },
      { name: 'Bob', _id: 2 as never, other: true },
    ]);
    const find = (projection: Document) => c.find({}, { projection }).sort({ _id: 1 }).toArray();
    // A dotted path of a missing field takes the general (mingo) way and adds nothing.
    const general = await find({ name: 1, email: 1, phone: 1, nested: 1, list: 1, 'missing.x': 1 });
    expect(await find({ name: 1, email: 1, phone: 1, nested: 1, list: 1 })).toEqual(general);
    expect(general).toEqual([
      { _id: 1, phone: '+1', name: 'Ada', nested: { a: 1 }, list: [1, 2], email: null },
      { _id: 2, name: 'Bob' },
    ]);
    expect(Object.keys((await find({ name: 1, phone: 1 }))[0])).toEqual(['_id', 'phone', 'name']);
    expect(await find({ _id: 0, name: true })).toEqual([{ name: 'Ada' }, { name: 'Bob' }]);
    expect(await find({ _id: 1 })).toEqual([{ _id: 1 }, { _id: 2 }]);
  });

  it('a document read, changed and read again comes back changed (sent documents keep their encoding only while unchanged)', async () => {
    const c = fx.db.collection<Loose>('reread');
    await c.insertMany([{ _id: 1 as never, v: 'first' }, { _id: 2 as never, v: 'other' }]);
    expect(await c.find({}).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, v: 'first' }, { _id: 2, v: 'other' }]);
    expect(await c.find({}, { projection: { v: 1, _id: 0 } }).sort({ _id: 1 }).toArray()).toEqual([{ v: 'first' }, { v: 'other' }]);
    expect(await c.find({}, { projection: { w: 1 } }).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1 }, { _id: 2 }]);
    await c.updateOne({ _id: 1 as never }, { $set: { v: 'second', w: 2 } });
    await c.replaceOne({ _id: 2 as never }, { v: 'replaced' });
    expect(await c.find({}).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, v: 'second', w: 2 }, { _id: 2, v: 'replaced' }]);
    expect(await c.find({}, { projection: { v: 1, _id: 0 } }).sort({ _id: 1 }).toArray()).toEqual([{ v: 'second' }, { v: 'replaced' }]);
    expect(await c.find({}, { projection: { w: 1 } }).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, w: 2 }, { _id: 2 }]);
    expect(await c.find({}, { projection: { w: 1, v: 1 } }).sort({ _id: 1 }).toArray()).toEqual([{ _id: 1, v: 'second', w: 2 }, { _id: 2, v: 'replaced' }]);
  });

  it('a failed $merge leaves a document it read unchanged, in storage and in what is sent', async () => {
    const c = fx.db.collection<Loose>('merged');
    await c.insertOne({ _id: 1 as never, a: { b: 1 } });
    expect(await c.find({}).toArray()).toEqual([{ _id: 1, a: { b: 1 } }]);
    const merge = { $merge: { into: 'merged', whenMatched: [{ $set: { 'a.b': 2, _id: 99 } }] } };
    await expect(c.aggregate([{ $match: { _id: 1 } }, merge]).toArray()).rejects.toMatchObject({ code: 66 });
    expect(await c.find({}).toArray()).toEqual([{ _id: 1, a: { b: 1 } }]);
    expect(await c.countDocuments({ 'a.b': 2 })).toBe(0);
  });

  it('round-trips BSON types: ObjectId, Date, Decimal128, Long, Binary, null versus missing', async () => {
    const types = fx.db.collection<Loose>('types');
    const doc = {
      _id: new ObjectId(),
      date: new Date('2024-02-29T12:34:56.789Z'),
      dec: Decimal128.fromString('12345.678901234567890'),
      long: Long.fromString('9007199254740993'),
      bin: new Binary(Buffer.from([0, 1, 2, 255])),
      uuid: new Binary(Buffer.alloc(16, 1), Binary.SUBTYPE_UUID),
      nul: null,
      nested: { list: [1, 'two', { three: 3 }] },
    };
    await types.insertOne(doc);
    const back = await types.findOne({ _id: doc._id }, { promoteLongs: false });
    expect(back).toEqual(doc);
    expect(back).not.toHaveProperty('missing');
    expect(back?.long).toBeInstanceOf(Long);
    expect((back?.long as Long).toString()).toBe('9007199254740993');
    expect(back?.dec.toString()).toBe('12345.678901234567890');
    expect(await types.countDocuments({ long: Long.fromString('9007199254740993') })).toBe(1);
    expect(await types.countDocuments({ dec: { $gt: Decimal128.fromString('9999') } })).toBe(1);
    expect(await types.countDocuments({ dec: { $gt: Decimal128.fromString('99999') } })).toBe(0);
    expect(await types.countDocuments({ long: { $gt: 1 } })).toBe(1);
    expect(await types.countDocuments({ date: { $lt: new Date('2025-01-01') } })).toBe(1);
    expect(await types.countDocuments({ bin: { $type: 'binData' }, dec: { $type: 'decimal' }, long: { $type: 'long' } })).toBe(1);
  });
});
