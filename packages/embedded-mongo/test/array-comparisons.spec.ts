/**
 * Query comparison operators against array and document operands, in BSON comparison order as the MongoDB manual's
 * "Comparison/Sort Order" page defines it: an array compares element by element (then by length), a document field
 * by field in order; only values of the operand's type take part (type bracketing), the whole array and its elements
 * both; MinKey and MaxKey bound every type. The same answers with and without an index on the field.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { MaxKey, MinKey } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: comparisons with array and document operands', () => {
  const fx = engineFixture('comparisons');
  const plain = () => fx.db.collection<Loose>('plain');
  const indexed = () => fx.db.collection<Loose>('indexed');
  const docs = [
    { _id: 1, f: [1, 2], o: { a: 1 } },
    { _id: 2, f: [], o: {} },
    { _id: 3, f: [3], o: { a: 1, b: 2 } },
    { _id: 4, f: 5, o: { b: 0 } },
    { _id: 5, f: [[0], 7], o: 'text' },
    { _id: 6 },
  ];

  beforeAll(async () => {
    await plain().insertMany(docs);
    await indexed().insertMany(docs);
    await indexed().createIndexes([{ key: { f: 1 } }, { key: { o: 1 } }]);
  });

  const ids = async (filter: Loose) => {
    const a = (await plain().find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id);
    const b = (await indexed().find(filter).sort({ _id: 1 }).toArray()).map((d) => d._id);
    expect(b).toEqual(a);
    return a;
  };

  it('$gt: [] matches the non-empty arrays (and arrays inside arrays)', async () => {
    expect(await ids({ f: { $gt: [] } })).toEqual([1, 3, 5]);
    expect(await ids({ f: { $gte: [] } })).toEqual([1, 2, 3, 5]);
  });

  it('$lt, $lte and $gt with a non-empty array compare element by element', async () => {
    expect(await ids({ f: { $lt: [2] } })).toEqual([1, 2, 5]);
    expect(await ids({ f: { $lte: [1, 2] } })).toEqual([1, 2, 5]);
    expect(await ids({ f: { $gt: [1, 2] } })).toEqual([3, 5]);
  });

  it('$ne and $eq with an array operand: the whole array', async () => {
    expect(await ids({ f: { $eq: [3] } })).toEqual([3]);
    expect(await ids({ f: { $ne: [] } })).toEqual([1, 3, 4, 5, 6]);
  });

  it('documents compare field by field, in order', async () => {
    expect(await ids({ o: { $gt: {} } })).toEqual([1, 3, 4]);
    expect(await ids({ o: { $gt: { a: 1 } } })).toEqual([3, 4]);
    expect(await ids({ o: { $lt: { a: 1, b: 0 } } })).toEqual([1, 2]);
    expect(await ids({ o: { $lte: { a: 1 } } })).toEqual([1, 2]);
  });

  it('MinKey and MaxKey bound every value, a missing field included', async () => {
    expect(await ids({ f: { $gt: new MinKey() } })).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await ids({ o: { $lt: new MaxKey() } })).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await ids({ f: { $lt: new MinKey() } })).toEqual([]);
  });
});
