import { describe, expect, it } from '@jest/globals';
import { Binary, Decimal128, Double, Long, MongoBulkWriteError, ObjectId, Timestamp } from 'mongodb';
import mongoose, { Schema } from 'mongoose';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: update fidelity (what MongoDB 7 writes, accepts and refuses)', () => {
  const fx = engineFixture('update_fidelity');

  it('$pull with $or / $and criteria on subdocuments', async () => {
    const c = fx.db.collection<Loose>('pull');
    await c.insertOne({ _id: 1, arr: [{ a: 1, b: 2 }, { a: 3 }, { c: 5 }, 7] });
    await c.updateOne({ _id: 1 }, { $pull: { arr: { $or: [{ a: 1, b: 2 }, { c: 5 }] } } } as Loose);
    expect((await c.findOne({ _id: 1 }))!.arr).toEqual([{ a: 3 }, 7]);
    await c.updateOne({ _id: 1 }, { $pull: { arr: { $and: [{ a: { $gt: 2 } }, { a: { $lt: 4 } }] } } } as Loose);
    expect((await c.findOne({ _id: 1 }))!.arr).toEqual([7]);
    await c.updateOne({ _id: 1 }, { $pull: { arr: { $gte: 7 } } } as Loose);
    expect((await c.findOne({ _id: 1 }))!.arr).toEqual([]);
  });

  it('several paths under the same array element: $, $[] and $[identifier]', async () => {
    const c = fx.db.collection<Loose>('positional');
    await c.insertOne({ _id: 1, children: [{ name: 'a', n: 0 }, { name: 'b', n: 0 }, { name: 'c', n: 5 }] });
    await c.updateOne({ _id: 1, 'children.name': 'b' }, { $set: { 'children.$.name': 'B', 'children.$.updatedAt': 1 } });
    await c.updateOne({ _id: 1 }, { $inc: { 'children.$[].n': 1 }, $set: { 'children.$[].seen': true } });
    // Array filters apply to the document as it was before the update, for every path.
    await c.updateOne({ _id: 1 }, { $set: { 'children.$[big].name': 'C', 'children.$[big].flag': 'x' } }, { arrayFilters: [{ 'big.n': { $gt: 3 } }] });
    expect((await c.findOne({ _id: 1 }))!.children).toEqual([
      { name: 'a', n: 1, seen: true },
      { name: 'B', n: 1, updatedAt: 1, seen: true },
      { name: 'C', n: 6, seen: true, flag: 'x' },
    ]);
    await expect(c.updateOne({ _id: 1 }, { $set: { children: [], 'children.0': 1 } })).rejects.toMatchObject({ code: 40 });
    await expect(c.updateOne({ _id: 1 }, { $set: { 'children.$[nope].x': 1 } })).rejects.toMatchObject({ code: 2 });
    await expect(c.updateOne({ _id: 1 }, { $set: { x: 1 } }, { arrayFilters: [{ 'unused.n': 1 }] })).rejects.toMatchObject({ code: 9 });
  });

  it("Mongoose timestamps on subdocuments (two paths under 'children.$')", async () => {
    const conn = await mongoose.createConnection(`${fx.engine.uri}update_fidelity_mongoose`).asPromise();
    try {
      const Parent = conn.model('Parent', new Schema({ children: [new Schema({ name: String }, { timestamps: true })] }, { timestamps: true }));
      const parent = await Parent.create({ children: [{ name: 'first' }, { name: 'second' }] });
      const childId = parent.children[1]._id;
      await Parent.updateOne({ _id: parent._id, 'children._id': childId }, { $set: { 'children.$.name': 'renamed' } });
      const reloaded = (await Parent.findById(parent._id).lean()) as Loose;
      expect(reloaded.children[1].name).toBe('renamed');
      expect(reloaded.children[1].updatedAt).toBeInstanceOf(Date);
    } finally {
      await conn.close();
    }
  });

  it('setting _id to its own value is a no-op; changing it is ImmutableField', async () => {
    const c = fx.db.collection<Loose>('own_id');
    const id = new ObjectId();
    await c.insertOne({ _id: id, x: 1 });
    expect(await c.updateOne({ _id: id }, { $set: { _id: id, x: 2 } })).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    expect(await c.updateOne({ _id: id }, { $set: { _id: id } })).toMatchObject({ matchedCount: 1, modifiedCount: 0 });
    await expect(c.updateOne({ _id: id }, { $set: { _id: new ObjectId() } })).rejects.toMatchObject({ code: 66 });
    await expect(c.updateOne({ _id: id }, { $unset: { _id: '' } })).rejects.toMatchObject({ code: 66 });
    expect(await c.findOne({ _id: id })).toEqual({ _id: id, x: 2 });
    const conn = await mongoose.createConnection(`${fx.engine.uri}update_fidelity`).asPromise();
    try {
      const Thing = conn.model('Thing', new Schema({ x: Number }), 'own_id');
      const whole = (await Thing.findById(id).lean()) as Loose;
      const updated = await Thing.findByIdAndUpdate(id, { ...whole, x: 3 }, { new: true }).lean();
      expect(updated).toMatchObject({ _id: id, x: 3 });
    } finally {
      await conn.close();
    }
  });

  it('$rename into __proto__, and $set/$unset of __proto__ fields', async () => {
    const c = fx.db.collection<Loose>('proto_update');
    await c.insertOne({ _id: 1, z: 5 });
    await c.updateOne({ _id: 1 }, { $rename: { z: '__proto__' } });
    const doc = await c.findOne({ _id: 1 });
    expect(Object.getOwnPropertyDescriptor(doc, '__proto__')?.value).toBe(5);
    expect(doc!.z).toBeUndefined();
  });

  it('$set of a field inside an array of subdocuments is PathNotViable (28)', async () => {
    const c = fx.db.collection<Loose>('path_not_viable');
    await c.insertOne({ _id: 1, comments: [{ body: 'a' }], n: 5 });
    await expect(c.updateOne({ _id: 1 }, { $set: { 'comments.body': 'x' } })).rejects.toMatchObject({ code: 28 });
    await expect(c.updateOne({ _id: 1 }, { $set: { 'n.deep': 1 } })).rejects.toMatchObject({ code: 28 });
    // Removing through an array or a scalar is a no-op, as in MongoDB.
    expect(await c.updateOne({ _id: 1 }, { $unset: { 'comments.body': '' } })).toMatchObject({ modifiedCount: 0 });
  });

  it('changing only the subtype of a Binary is written', async () => {
    const c = fx.db.collection<Loose>('binary_subtype');
    await c.insertOne({ _id: 1, b: new Binary(Buffer.from([1, 2, 3]), 0) });
    expect(await c.updateOne({ _id: 1 }, { $set: { b: new Binary(Buffer.from([1, 2, 3]), 5) } })).toMatchObject({ modifiedCount: 1 });
    expect((await c.findOne({ _id: 1 }))!.b.sub_type).toBe(5);
  });

  it('documents over 16 MiB are refused, by insert and by update', async () => {
    const c = fx.db.collection<Loose>('too_large');
    await c.insertOne({ _id: 1 });
    await c.updateOne({ _id: 1 }, { $set: { a: 'x'.repeat(9_000_000) } });
    await expect(c.updateOne({ _id: 1 }, { $set: { b: 'x'.repeat(9_000_000) } })).rejects.toMatchObject({ code: 17419 });
    // Just over 16 MiB: the driver sends it (its own limit leaves room for the message), the server refuses it.
    await expect(c.insertOne({ _id: 2, a: 'x'.repeat(8_390_000), b: 'y'.repeat(8_390_000) })).rejects.toMatchObject({ code: 10334 });
    expect(await c.countDocuments()).toBe(1);
  });

  it('an update pipeline that drops _id keeps it ($replaceRoot)', async () => {
    const c = fx.db.collection<Loose>('replace_root');
    await c.insertOne({ _id: 1, x: 1, t: { u: { v: 1 } } });
    await c.updateOne({ _id: 1 }, [{ $replaceRoot: { newRoot: '$t' } }, { $addFields: { foo: 1 } }]);
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, u: { v: 1 }, foo: 1 });
  });

  it('updateOne / replaceOne with a sort (MongoDB 8.0) are refused as 7.0 does, in bulkWrite too', async () => {
    const c = fx.db.collection<Loose>('update_sort');
    await c.insertMany([{ _id: 1, x: 1 }, { _id: 2, x: 2 }]);
    await expect(c.updateOne({}, { $set: { y: 1 } }, { sort: { _id: -1 } } as Loose)).rejects.toMatchObject({ code: 40415 });
    await expect(c.replaceOne({}, { y: 1 }, { sort: { _id: -1 } } as Loose)).rejects.toMatchObject({ code: 40415 });
    await expect(c.bulkWrite([{ updateOne: { filter: {}, update: { $set: { y: 1 } }, sort: { _id: -1 } } } as Loose])).rejects.toBeInstanceOf(MongoBulkWriteError);
    expect(await c.countDocuments({ y: { $exists: true } })).toBe(0);
  });

  it('an _id with a $-prefixed field is refused; top-level $-prefixed fields are stored (5.0+)', async () => {
    const c = fx.db.collection<Loose>('dollar_id');
    await expect(c.insertOne({ _id: { $a: 1 } })).rejects.toMatchObject({ code: 52 });
    await c.insertOne({ _id: 2, $b: 1, nested: { $c: 2 } });
    expect(await c.findOne({ _id: 2 })).toEqual({ _id: 2, $b: 1, nested: { $c: 2 } });
  });

  it('$-prefixed field names inside $set and $setOnInsert values, with upsert', async () => {
    const c = fx.db.collection<Loose>('dollar_upsert');
    await c.updateOne({ _id: 1 }, { $set: { mixed: { $key: 1, plain: 2 } }, $setOnInsert: { meta: { $created: true } } }, { upsert: true });
    await c.updateOne({ _id: 1 }, { $set: { other: { $x: 1 } } }, { upsert: true });
    expect(await c.findOne({ _id: 1 })).toEqual({ _id: 1, mixed: { $key: 1, plain: 2 }, meta: { $created: true }, other: { $x: 1 } });
  });

  it('$currentDate with a timestamp, $min/$max in BSON order, $mul on a missing field', async () => {
    const c = fx.db.collection<Loose>('operators');
    await c.insertOne({ _id: 1, lo: 5, hi: 'b' });
    await c.updateOne({ _id: 1 }, { $currentDate: { ts: { $type: 'timestamp' }, at: true }, $min: { lo: 'a' }, $max: { hi: 1 }, $mul: { m: 3 } } as Loose);
    const doc = await c.findOne({ _id: 1 });
    expect(doc!.ts).toBeInstanceOf(Timestamp);
    expect(doc!.at).toBeInstanceOf(Date);
    // Numbers sort before strings: $min keeps 5, $max keeps 'b'.
    expect(doc).toMatchObject({ lo: 5, hi: 'b', m: 0 });
  });
  it('new fields from an update come after the existing ones, in field-name order (MongoDB 5.0+)', async () => {
    const c = fx.db.collection<Loose>('new_field_order');
    await c.insertOne({ _id: 1, z: 1, m: { y: 1 } });
    await c.updateOne({ _id: 1 }, { $set: { y: 1, b: 2, 'n.z': 1, 'n.c': 2, 'm.x': 1, 'm.a': 2, lit: { z: 1, a: 2 } }, $inc: { a: 1 }, $push: { arr: 1 } } as Loose);
    const doc = await c.findOne({ _id: 1 });
    expect(Object.keys(doc!)).toEqual(['_id', 'z', 'm', 'a', 'arr', 'b', 'lit', 'n', 'y']);
    expect(Object.keys(doc!.m)).toEqual(['y', 'a', 'x']);
    expect(Object.keys(doc!.n)).toEqual(['c', 'z']);
    // A document given as a value keeps its own order.
    expect(Object.keys(doc!.lit)).toEqual(['z', 'a']);
    await c.updateOne({ _id: 1 }, { $rename: { z: 'zz', a: 'c' } });
    expect(Object.keys((await c.findOne({ _id: 1 }))!)).toEqual(['_id', 'm', 'arr', 'b', 'lit', 'n', 'y', 'c', 'zz']);
    // An upsert: the filter's equalities first, then the update's new fields in order.
    await c.updateOne({ _id: 2, k: 1 }, { $set: { q: 1, e: 1 }, $setOnInsert: { d: 1 } }, { upsert: true });
    expect(Object.keys((await c.findOne({ _id: 2 }))!)).toEqual(['_id', 'k', 'd', 'e', 'q']);
  });

  it('$inc and $mul on Decimal128: exact decimal arithmetic with MongoDB\'s result types', async () => {
    const c = fx.db.collection<Loose>('decimals');
    const dec = (s: string) => Decimal128.fromString(s);
    await c.insertOne({ _id: 1, price: dec('1.5'), qty: 2, big: dec('9999999999999999999999999999999999'), tiny: dec('0.1') });
    await c.updateOne({ _id: 1 }, { $inc: { price: dec('2.25'), qty: dec('0.50'), tiny: dec('0.2'), big: 1, fresh: dec('1.0') } });
    let doc = await c.findOne({ _id: 1 });
    expect(doc!.price).toEqual(dec('3.75'));
    // An int32 field incremented by a Decimal128 becomes a Decimal128; 0.1 + 0.2 is exactly 0.3 in decimal.
    expect(doc!.qty).toEqual(dec('2.50'));
    expect(doc!.tiny).toEqual(dec('0.3'));
    // 35 significant digits round (half-even) to 34.
    expect(doc!.big).toEqual(dec('1.000000000000000000000000000000000E+34'));
    expect(doc!.fresh).toEqual(dec('1.0'));
    await c.updateOne({ _id: 1 }, { $mul: { price: 2, tiny: dec('-1.5') }, $inc: { qty: new Double(0.1) } });
    doc = await c.findOne({ _id: 1 });
    expect(doc!.price).toEqual(dec('7.50'));
    expect(doc!.tiny).toEqual(dec('-0.45'));
    // A double joins a decimal with 15 significant digits, as MongoDB converts it.
    expect(doc!.qty).toEqual(dec('2.600000000000000'));
    await c.updateOne({ _id: 1 }, { $inc: { price: Long.fromNumber(1) } });
    expect((await c.findOne({ _id: 1 }))!.price).toEqual(dec('8.50'));
    expect(await c.countDocuments({ price: { $gt: 8, $lt: 9 } })).toBe(1);
  });
});
