/**
 * `$lookup` with an array `localField`: the MongoDB manual's classes and members example ("Use $lookup with an
 * Array"), whose printed output lists the joined members in the members collection's order, each once.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: $lookup with an array localField', () => {
  const fx = engineFixture('lookuporder');

  beforeAll(async () => {
    await fx.db.collection<Loose>('classes').insertMany([
      { _id: 1, title: 'Reading is ...', enrollmentlist: ['giraffe2', 'pandabear', 'artie'], days: ['M', 'W', 'F'] },
      { _id: 2, title: 'But Writing ...', enrollmentlist: ['giraffe1', 'artie', 'nobody', 'artie'], days: ['T', 'F'] },
    ]);
    await fx.db.collection<Loose>('members').insertMany([
      { _id: 1, name: 'artie', joined: new Date('2016-05-01'), status: 'A' },
      { _id: 2, name: 'giraffe', joined: new Date('2017-05-01'), status: 'D' },
      { _id: 3, name: 'giraffe1', joined: new Date('2017-10-01'), status: 'A' },
      { _id: 4, name: 'panda', joined: new Date('2018-10-11'), status: 'A' },
      { _id: 5, name: 'pandabear', joined: new Date('2018-12-01'), status: 'A' },
      { _id: 6, name: 'giraffe2', joined: new Date('2018-12-01'), status: 'D' },
    ]);
  });

  it('answers the joined documents in the foreign collection order, each once', async () => {
    const rows = await fx.db
      .collection<Loose>('classes')
      .aggregate([{ $lookup: { from: 'members', localField: 'enrollmentlist', foreignField: 'name', as: 'enrollee_info' } }])
      .toArray();
    expect(rows.map((r) => [r._id, r.enrollee_info.map((m: Loose) => m._id)])).toEqual([
      [1, [1, 5, 6]],
      [2, [1, 3]],
    ]);
    expect(rows[0].enrollee_info[0]).toEqual({ _id: 1, name: 'artie', joined: new Date('2016-05-01'), status: 'A' });
  });
});
