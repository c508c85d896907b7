import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Decimal128, Long, MongoClient, ObjectId, type Collection, type Document } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index.js';

/**
 * Filters, projections and operator updates without aggregation expressions run on a context of the
 * query and projection operators alone (query/mingo.ts); these cases keep every kind of operator that
 * still has to reach them working: the engine's own corrections, query operators inside updates, and
 * expressions wherever they appear.
 */
/** Typed loosely on purpose: the cases send operators whose shapes the driver's typings do not all model. */
type Item = Document & { _id: number };

describe('embedded engine: operators available to filters, projections and updates', () => {
  let engine: EmbeddedMongo;
  let client: MongoClient;
  let items: Collection<Item>;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    client = await new MongoClient(engine.uri).connect();
    items = client.db('operator_context').collection<Item>('items');
    await items.insertMany([
      { _id: 1, owner: new ObjectId(), a: 2, b: 3, price: Decimal128.fromString('9'), big: Long.fromString('9007199254740993'), tags: ['x', 'y'], lines: [{ q: 1 }, { q: 5 }] },
      { _id: 2, owner: 'nobody', a: 7, b: 1, price: Decimal128.fromString('10'), big: Long.fromString('5'), tags: ['y'], lines: [{ q: 9 }] },
    ]);
  });

  afterAll(async () => {
    await client.close();
    await engine.stop();
  });

  const ids = async (filter: object) => (await items.find(filter).sort({ _id: 1 }).toArray()).map((doc) => doc._id);

  it('keeps the engine’s BSON corrections in plain filters', async () => {
    expect(await ids({ owner: { $type: 'objectId' } })).toEqual([1]);
    expect(await ids({ price: { $gt: Decimal128.fromString('9.5') } })).toEqual([2]);
    expect(await ids({ big: { $gt: Long.fromString('9007199254740992') } })).toEqual([1]);
    expect(await ids({ lines: { $elemMatch: { q: { $gte: 5 } } }, tags: { $all: ['y'] } })).toEqual([1, 2]);
  });

  it('evaluates $expr wherever it sits in a filter', async () => {
    expect(await ids({ $expr: { $gt: ['$a', '$b'] } })).toEqual([2]);
    expect(await ids({ $or: [{ _id: 5 }, { $expr: { $eq: [{ $add: ['$a', '$b'] }, 5] } }] })).toEqual([1]);
  });

  it('projects with projection operators and with computed fields', async () => {
    const sliced = await items.findOne({ _id: 1 }, { projection: { tags: { $slice: 1 }, lines: { $elemMatch: { q: 5 } } } });
    expect(sliced).toEqual({ _id: 1, tags: ['x'], lines: [{ q: 5 }] });
    const computed = await items.findOne({ _id: 1 }, { projection: { total: { $add: ['$a', '$b'] }, first: { $first: '$tags' } } });
    expect(computed).toEqual({ _id: 1, total: 5, first: 'x' });
  });

  it('applies query operators inside updates: positional, arrayFilters and $pull conditions', async () => {
    await items.updateOne({ _id: 1, 'lines.q': 5 }, { $set: { 'lines.$.seen': true } });
    await items.updateOne({ _id: 1 }, { $inc: { 'lines.$[small].q': 10 } }, { arrayFilters: [{ 'small.q': { $lt: 2 } }] });
    await items.updateOne({ _id: 2 }, { $pull: { lines: { q: { $gt: 8 } } } as Document });
    expect((await items.findOne({ _id: 1 }))?.lines).toEqual([{ q: 11 }, { q: 5, seen: true }]);
    expect((await items.findOne({ _id: 2 }))?.lines).toEqual([]);
  });

  it('runs aggregation expressions in pipeline updates and in findAndModify projections', async () => {
    await items.updateOne({ _id: 2 }, [{ $set: { sum: { $add: ['$a', '$b'] } } }]);
    const after = await items.findOneAndUpdate({ _id: 2 }, { $inc: { a: 1 } }, { returnDocument: 'after', projection: { double: { $multiply: ['$a', 2] }, sum: 1 } });
    expect(after).toEqual({ _id: 2, sum: 8, double: 16 });
  });
});
