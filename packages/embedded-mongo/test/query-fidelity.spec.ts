import { describe, expect, it } from '@jest/globals';
import { Binary, DBRef, Double, Long, ObjectId, UUID } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

const bin = (bytes: number[], subtype = 0) => new Binary(Buffer.from(bytes), subtype);

describe('embedded engine: query and projection fidelity (answers MongoDB 7 gives)', () => {
  const fx = engineFixture('query_fidelity');

  it('$regex with $options, also inside $not and $elemMatch', async () => {
    const c = fx.db.collection<Loose>('regex');
    await c.insertMany([{ _id: 1, s: 'Apple', tags: ['Alpha', 'beta'] }, { _id: 2, s: 'banana', tags: ['gamma'] }]);
    expect(await c.find({ s: { $regex: '^a', $options: 'i' } }).toArray()).toEqual([{ _id: 1, s: 'Apple', tags: ['Alpha', 'beta'] }]);
    expect(await c.countDocuments({ s: { $regex: '^a' } })).toBe(0);
    expect(await c.countDocuments({ s: { $not: { $regex: '^A', $options: 'i' } } })).toBe(1);
    expect(await c.countDocuments({ tags: { $elemMatch: { $regex: 'ALPHA', $options: 'i' } } })).toBe(1);
    expect(await c.countDocuments({ s: { $regex: 'a n a # comment', $options: 'x' } })).toBe(1);
    await expect(c.countDocuments({ s: { $options: 'i' } } as Loose)).rejects.toMatchObject({ code: 2, message: expect.stringContaining('$options needs a $regex') });
  });

  it('a null _id is stored and found by $type (sent with the raw insert command: the driver would replace it)', async () => {
    await fx.db.command({ insert: 'null_ids', documents: [{ _id: null, v: 1 }] });
    expect(await fx.db.collection<Loose>('null_ids').find({ _id: { $type: 'null' } }).toArray()).toEqual([{ _id: null, v: 1 }]);
    const dup = await fx.db.command({ insert: 'null_ids', documents: [{ _id: null }] });
    expect(dup.writeErrors).toEqual([expect.objectContaining({ code: 11000 })]);
  });

  it('$where and $function are refused as JavaScript the engine does not run (115)', async () => {
    const c = fx.db.collection<Loose>('scripts');
    await c.insertOne({ _id: 1 });
    await expect(c.find({ $where: 'true' }).toArray()).rejects.toMatchObject({ code: 115, message: expect.stringContaining('$where') });
    const fn = { $function: { body: 'function() { return 1 }', args: [], lang: 'js' } };
    await expect(c.aggregate([{ $project: { x: fn } }]).toArray()).rejects.toMatchObject({ code: 115, message: expect.stringContaining('$function') });
  });

  it('$all against a field that is not an array', async () => {
    const c = fx.db.collection<Loose>('all');
    await c.insertMany([{ _id: 1, s: 'abc' }, { _id: 2, s: ['abc', 'd'] }, { _id: 3, s: 'x' }]);
    expect((await c.find({ s: { $all: ['abc'] } }).toArray()).map((d) => d._id)).toEqual([1, 2]);
    expect(await c.countDocuments({ s: { $all: [] } })).toBe(0);
  });

  it('Binary compares by length, then subtype, then bytes; equality includes the subtype', async () => {
    const c = fx.db.collection<Loose>('binary');
    await c.insertMany([{ _id: 1, b: bin([2]) }, { _id: 2, b: bin([1, 1]) }, { _id: 3, b: bin([1, 1], 4) }, { _id: 4, b: bin([0, 0, 0]) }]);
    // A shorter Binary is smaller whatever its bytes: [2] < [1, 1].
    expect((await c.find({ b: { $gt: bin([2]) } }).toArray()).map((d) => d._id)).toEqual([2, 3, 4]);
    expect((await c.find({ b: { $lt: bin([1, 1], 4) } }).toArray()).map((d) => d._id)).toEqual([1, 2]);
    expect((await c.find({ b: bin([1, 1]) }).toArray()).map((d) => d._id)).toEqual([2]);
    expect((await c.find({}).sort({ b: -1 }).toArray()).map((d) => d._id)).toEqual([4, 3, 2, 1]);
  });

  it('$bits* operators on Binary and UUID values, and on 64-bit numbers', async () => {
    const c = fx.db.collection<Loose>('bits');
    const uuid = new UUID('00000000-0000-0000-0000-000000000081');
    await c.insertMany([{ _id: 1, v: bin([0b0000_0101]) }, { _id: 2, v: uuid }, { _id: 3, v: Long.fromString('4611686018427387904') }, { _id: 4, v: -1 }]);
    expect((await c.find({ v: { $bitsAllSet: [0, 2] } }).toArray()).map((d) => d._id)).toEqual([1, 4]);
    expect((await c.find({ v: { $bitsAnySet: bin([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0b1000_0000]) } }).toArray()).map((d) => d._id)).toEqual([2, 4]);
    expect((await c.find({ v: { $bitsAllSet: [62] } }).toArray()).map((d) => d._id)).toEqual([3, 4]);
    expect((await c.find({ v: { $bitsAllClear: [1] } }).toArray()).map((d) => d._id)).toEqual([1, 2, 3]);
    expect((await c.find({ v: { $bitsAnyClear: 5 } }).toArray()).map((d) => d._id)).toEqual([2, 3]);
  });

  it('a whole-number double stays a double (find, $type, update arithmetic)', async () => {
    const c = fx.db.collection<Loose>('doubles');
    await c.insertMany([{ _id: 1, d: new Double(5), i: 5 }, { _id: 2, d: 2.5 }]);
    expect((await c.find({ d: { $type: 'double' } }).toArray()).map((d) => d._id)).toEqual([1, 2]);
    expect(await c.countDocuments({ i: { $type: 'double' } })).toBe(0);
    expect(await c.countDocuments({ d: 5 })).toBe(1);
    const raw = await c.findOne({ _id: 1 }, { promoteValues: false });
    expect(raw?.d).toBeInstanceOf(Double);
    expect(raw?.i?._bsontype).toBe('Int32');
    await c.updateOne({ _id: 1 }, { $inc: { d: 1, i: 2147483647 } });
    const after = await c.findOne({ _id: 1 }, { promoteValues: false, promoteLongs: false });
    expect(after?.d).toEqual(new Double(6));
    // int32 overflowing in $inc becomes an int64, as in MongoDB.
    expect(after?.i).toEqual(Long.fromNumber(2147483652));
    const grouped = await c.aggregate([{ $group: { _id: null, total: { $sum: '$d' } } }]).toArray();
    expect(grouped).toEqual([{ _id: null, total: 8.5 }]);
  });

  it('a projection of only $slice keeps every other field; nested exclusions leave the stored document alone', async () => {
    const c = fx.db.collection<Loose>('slice');
    await c.insertOne({ _id: 1, arr: [1, 2, 3, 4], other: 'x', sub: { a: 1, b: 2 } });
    expect(await c.findOne({ _id: 1 }, { projection: { arr: { $slice: 2 } } })).toEqual({ _id: 1, arr: [1, 2], other: 'x', sub: { a: 1, b: 2 } });
    expect(await c.findOne({ _id: 1 }, { projection: { arr: { $slice: [-2, 1] }, other: 0 } })).toEqual({ _id: 1, arr: [3], sub: { a: 1, b: 2 } });
    expect(await c.findOne({ _id: 1 }, { projection: { 'sub.a': 0 } })).toEqual({ _id: 1, arr: [1, 2, 3, 4], other: 'x', sub: { b: 2 } });
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, arr: [1, 2, 3, 4], other: 'x', sub: { a: 1, b: 2 } });
  });

  it('an inclusion projection returns _id first and fields in document order', async () => {
    const c = fx.db.collection<Loose>('order');
    await c.insertOne({ _id: 1, a: 1, b: { x: 1, y: 2 }, c: 3 });
    const doc = await c.findOne({ _id: 1 }, { projection: { c: 1, 'b.y': 1, 'b.x': 1, a: 1 } });
    expect(Object.keys(doc!)).toEqual(['_id', 'a', 'b', 'c']);
    expect(Object.keys(doc!.b)).toEqual(['x', 'y']);
  });

  it('$elemMatch in a projection with operator-only criteria', async () => {
    const c = fx.db.collection<Loose>('elemmatch');
    await c.insertOne({ _id: 1, scores: [3, 8, 9], items: [{ v: 1 }, { v: 7 }] });
    expect(await c.findOne({ _id: 1 }, { projection: { scores: { $elemMatch: { $gt: 5 } } } })).toEqual({ _id: 1, scores: [8] });
    expect(await c.findOne({ _id: 1 }, { projection: { items: { $elemMatch: { v: { $gt: 5 } } } } })).toEqual({ _id: 1, items: [{ v: 7 }] });
  });

  it('keeps an own __proto__ field of a subdocument through updates and reads', async () => {
    const c = fx.db.collection<Loose>('proto');
    const sub = JSON.parse('{"__proto__": {"p": 1}, "q": 2}');
    await c.insertOne({ _id: 1, sub });
    await c.updateOne({ _id: 1 }, { $set: { other: 1 } });
    const doc = await c.findOne({ _id: 1 });
    expect(Object.prototype.hasOwnProperty.call(doc!.sub, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(doc!.sub, '__proto__')?.value).toEqual({ p: 1 });
  });

  it('collation strength 1 and 2: case-insensitive matching, sorting, counting and distinct', async () => {
    const c = fx.db.collection<Loose>('collation');
    await c.insertMany([{ _id: 1, name: 'alice' }, { _id: 2, name: 'Alice' }, { _id: 3, name: 'Álice' }, { _id: 4, name: 'bob' }, { _id: 5, name: 'Bob' }]);
    const secondary = { locale: 'en', strength: 2 };
    const primary = { locale: 'en', strength: 1 };
    expect((await c.find({ name: 'ALICE' }, { collation: secondary }).toArray()).map((d) => d._id)).toEqual([1, 2]);
    expect((await c.find({ name: 'ALICE' }, { collation: primary }).toArray()).map((d) => d._id)).toEqual([1, 2, 3]);
    expect(await c.countDocuments({ name: { $in: ['BOB'] } }, { collation: secondary })).toBe(2);
    expect(await c.countDocuments({ name: { $gt: 'ALICE' } }, { collation: secondary })).toBe(3);
    expect((await c.find({}, { collation: secondary }).sort({ name: 1, _id: 1 }).toArray()).map((d) => d._id)).toEqual([1, 2, 3, 4, 5]);
    expect(await c.distinct('name', {}, { collation: primary })).toHaveLength(2);
    expect(await c.countDocuments({ name: 'ALICE' })).toBe(0);
    const grouped = await c.aggregate([{ $match: { name: 'bob' } }, { $sort: { _id: -1 } }], { collation: secondary }).toArray();
    expect(grouped.map((d) => d._id)).toEqual([5, 4]);
    await expect(c.find({}, { collation: { locale: 'en', strength: 9 } }).toArray()).rejects.toMatchObject({ code: 2 });
  });

  it('an index with a collation: case-insensitive uniqueness, used by queries with the same collation', async () => {
    const c = fx.db.collection<Loose>('collated_index');
    await c.createIndex({ email: 1 }, { unique: true, collation: { locale: 'en', strength: 2 }, name: 'email_ci' });
    const [spec] = (await c.listIndexes().toArray()).filter((ix) => ix.name === 'email_ci');
    expect(spec.collation).toMatchObject({ locale: 'en', strength: 2, caseLevel: false });
    await c.insertOne({ _id: 1, email: 'Ada@Example.com' });
    await expect(c.insertOne({ _id: 2, email: 'ada@example.COM' })).rejects.toMatchObject({ code: 11000 });
    const explained = await c.find({ email: 'ADA@example.com' }, { collation: { locale: 'en', strength: 2 } }).explain('executionStats');
    expect(explained.queryPlanner.winningPlan.inputStage).toMatchObject({ stage: 'IXSCAN', indexName: 'email_ci' });
    expect(await c.countDocuments({ email: 'ADA@example.com' }, { collation: { locale: 'en', strength: 2 } })).toBe(1);
    // A simple-collation query cannot use the index for its string bounds: it still answers correctly.
    expect(await c.countDocuments({ email: 'ADA@example.com' })).toBe(0);
  });

  it('aggregation expressions compare values in BSON order; $sort sorts as find does', async () => {
    const c = fx.db.collection<Loose>('expressions');
    await c.insertMany([{ _id: 1, arr: [1, 5], n: Long.fromNumber(10) }, { _id: 2, arr: 5, n: Long.fromNumber(9) }, { _id: 3, n: 'text' }, { _id: 4, n: null }]);
    // In an expression an array is one value: [1, 5] is not equal to 5.
    expect((await c.find({ $expr: { $eq: ['$arr', 5] } }).toArray()).map((d) => d._id)).toEqual([2]);
    const flags = await c.aggregate([{ $project: { missingIsNull: { $eq: ['$nothing', null] }, cmp: { $cmp: ['$n', 'a'] } } }, { $sort: { _id: 1 } }]).toArray();
    expect(flags.map((d) => [d.missingIsNull, d.cmp])).toEqual([[false, -1], [false, -1], [false, 1], [false, -1]]);
    // Longs sort numerically, types in BSON order (null < numbers < strings).
    expect((await c.aggregate([{ $sort: { n: 1 } }]).toArray()).map((d) => d._id)).toEqual([4, 2, 1, 3]);
    const named = fx.db.collection<Loose>('expression_collation');
    await named.insertMany([{ _id: 1, a: 'X', b: 'x' }, { _id: 2, a: 'X', b: 'y' }]);
    expect(await named.countDocuments({ $expr: { $eq: ['$a', '$b'] } }, { collation: { locale: 'en', strength: 2 } })).toBe(1);
  });

  it("a collection's default collation applies to its queries and new indexes", async () => {
    await fx.db.createCollection('default_collation', { collation: { locale: 'en', strength: 2 } });
    const c = fx.db.collection<Loose>('default_collation');
    await c.insertMany([{ _id: 1, s: 'x' }, { _id: 2, s: 'X' }]);
    expect(await c.countDocuments({ s: 'x' })).toBe(2);
    await c.createIndex({ s: 1 });
    const [, ix] = await c.listIndexes().toArray();
    expect(ix.collation).toMatchObject({ locale: 'en', strength: 2 });
    const [info] = await fx.db.listCollections({ name: 'default_collation' }).toArray();
    expect((info as Loose).options.collation).toMatchObject({ locale: 'en', strength: 2 });
  });
  it('DBRef fields: queries on ref.$id / ref.$ref, distinct, indexes, $elemMatch over DBRefs, $pull', async () => {
    const c = fx.db.collection<Loose>('dbrefs');
    const user = new ObjectId();
    // A DBRef object and a plain { $ref, $id } document are the same BSON: MongoDB stores both as a subdocument.
    await c.insertMany([
      { _id: 1, ref: new DBRef('users', user), refs: [new DBRef('users', user), new DBRef('teams', 2 as never)] },
      { _id: 2, ref: { $ref: 'teams', $id: 2, $db: 'other' }, refs: [{ $ref: 'teams', $id: 3 }] },
      { _id: 3, ref: { x: 1 } },
    ]);
    const ids = async (filter: Loose) => (await c.find(filter).toArray()).map((d) => d._id);
    expect(await ids({ 'ref.$id': user })).toEqual([1]);
    expect(await ids({ 'ref.$ref': 'teams' })).toEqual([2]);
    expect(await ids({ 'ref.$db': 'other' })).toEqual([2]);
    expect(await ids({ 'refs.$id': 3 })).toEqual([2]);
    expect(await c.distinct('ref.$id')).toEqual([2, user]);
    expect(await c.distinct('refs.$ref')).toEqual(['teams', 'users']);
    // Equality with a whole DBRef: every field, in order ($db included).
    expect(await ids({ ref: new DBRef('users', user) })).toEqual([1]);
    expect(await ids({ ref: { $ref: 'teams', $id: 2 } })).toEqual([]);
    expect(await ids({ ref: { $in: [{ $ref: 'teams', $id: 2, $db: 'other' }] } })).toEqual([2]);
    // $elemMatch on a DBRef's fields (Mongoose gh-8577), also with operators, also inside $all.
    expect(await ids({ refs: { $elemMatch: { $ref: 'users', $id: user } } })).toEqual([1]);
    expect(await ids({ refs: { $elemMatch: { $ref: 'teams', $id: { $gte: 2 } } } })).toEqual([1, 2]);
    expect(await ids({ refs: { $all: [{ $elemMatch: { $ref: 'teams', $id: 3 } }] } })).toEqual([2]);
    // Read back as DBRefs by the driver, byte for byte what was written.
    expect((await c.findOne({ _id: 1 }))?.ref).toEqual(new DBRef('users', user));
    await c.createIndex({ 'ref.$id': 1 });
    const plan = await c.find({ 'ref.$id': user }).explain();
    expect(JSON.stringify(plan)).toContain('IXSCAN');
    expect(await ids({ 'ref.$id': user })).toEqual([1]);
    await c.updateOne({ _id: 1 }, { $pull: { refs: { $ref: 'teams', $id: 2 } } } as Loose);
    expect((await c.findOne({ _id: 1 }))?.refs).toEqual([new DBRef('users', user)]);
  });

  it('embedded documents are equal only with their fields in the same order (find, $in, $ne, $group)', async () => {
    const c = fx.db.collection<Loose>('field_order');
    await c.insertMany([
      { _id: 1, k: { a: 1, b: 2 } },
      { _id: 2, k: { b: 2, a: 1 } },
      { _id: 3, k: [{ b: 2, a: 1 }] },
      { _id: 4, k: { a: Long.fromNumber(1), b: 2 } },
    ]);
    const ids = async (filter: Loose) => (await c.find(filter).toArray()).map((d) => d._id);
    expect(await ids({ k: { a: 1, b: 2 } })).toEqual([1, 4]);
    expect(await ids({ k: { b: 2, a: 1 } })).toEqual([2, 3]);
    expect(await ids({ k: { $in: [{ b: 2, a: 1 }] } })).toEqual([2, 3]);
    expect(await ids({ k: { $ne: { a: 1, b: 2 } } })).toEqual([2, 3]);
    expect(await ids({ k: [{ b: 2, a: 1 }] })).toEqual([3]);
    const groups = await c.aggregate([{ $match: { _id: { $lte: 2 } } }, { $group: { _id: '$k', n: { $sum: 1 } } }, { $sort: { n: 1 } }]).toArray();
    expect(groups).toHaveLength(2);
    expect(groups.map((g) => Object.keys(g._id))).toEqual(expect.arrayContaining([['a', 'b'], ['b', 'a']]));
    // Numbers of different BSON types that are equal are one group key, as in MongoDB; a missing key is null.
    await c.insertMany([{ _id: 5, n: 1 }, { _id: 6, n: Long.fromNumber(1) }, { _id: 7, n: 1.0 }, { _id: 8 }]);
    const byNumber = await c.aggregate([{ $match: { _id: { $gte: 5 } } }, { $group: { _id: '$n', count: { $sum: 1 } } }, { $sort: { count: -1 } }]).toArray();
    expect(byNumber).toEqual([{ _id: 1, count: 3 }, { _id: null, count: 1 }]);
  });
});
