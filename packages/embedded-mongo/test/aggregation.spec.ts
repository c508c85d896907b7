import { beforeAll, describe, expect, it } from '@jest/globals';
import { ObjectId } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

describe('embedded engine: aggregation', () => {
  const fx = engineFixture('agg');
  const companyId = new ObjectId();
  const agentA = new ObjectId();
  const agentB = new ObjectId();

  beforeAll(async () => {
    await fx.db.collection<Loose>('agents').insertMany([
      { _id: agentA, name: 'Ann', companyId },
      { _id: agentB, name: 'Ben', companyId },
    ]);
    await fx.db.collection<Loose>('conversations').insertMany([
      { _id: 1, companyId, status: 'open', agentId: agentA, tags: ['vip', 'sales'], createdAt: new Date('2024-03-10T23:30:00Z'), n: 3 },
      { _id: 2, companyId, status: 'closed', agentId: agentA, tags: ['sales'], createdAt: new Date('2024-03-11T03:30:00Z'), n: 1 },
      { _id: 3, companyId, status: 'open', agentId: agentB, tags: [], createdAt: new Date('2024-03-11T05:30:00Z'), n: 5 },
      { _id: 4, companyId, status: 'queued', agentId: null, tags: ['vip'], createdAt: new Date('2024-03-18T12:00:00Z'), n: 2 },
      { _id: 5, companyId: new ObjectId(), status: 'open', agentId: agentB, tags: [], createdAt: new Date('2024-03-12T12:00:00Z'), n: 9 },
    ]);
  });

  const conversations = () => fx.db.collection<Loose>('conversations');

  it('$match, $group with accumulators, $sort, $project', async () => {
    const rows = await conversations()
      .aggregate([
        { $match: { companyId } },
        { $group: { _id: '$status', count: { $sum: 1 }, total: { $sum: '$n' }, ids: { $push: '$_id' } } },
        { $sort: { count: -1, _id: 1 } },
        { $project: { _id: 0, status: '$_id', count: 1, total: 1, ids: 1 } },
      ])
      .toArray();
    expect(rows).toEqual([
      { status: 'open', count: 2, total: 8, ids: [1, 3] },
      { status: 'closed', count: 1, total: 1, ids: [2] },
      { status: 'queued', count: 1, total: 2, ids: [4] },
    ]);
  });

  it('$project answers _id first and the fields in document order, computed fields after them', async () => {
    const rows = await conversations()
      .aggregate([{ $match: { _id: 1 } }, { $project: { n: 1, label: { $concat: ['#', '$status'] }, status: 1, _id: 1 } }])
      .toArray();
    expect(rows).toEqual([{ _id: 1, status: 'open', n: 3, label: '#open' }]);
    expect(Object.keys(rows[0])).toEqual(['_id', 'status', 'n', 'label']);
    // After a $group, _id is first as well; a computed field named like an existing one comes after the taken ones.
    const grouped = await conversations()
      .aggregate([{ $match: { companyId } }, { $group: { _id: '$status', n: { $sum: '$n' } } }, { $sort: { _id: 1 } }, { $limit: 1 }, { $project: { status: { $toUpper: '$_id' }, n: { $multiply: ['$n', 10] } } }])
      .toArray();
    expect(grouped).toEqual([{ _id: 'closed', status: 'CLOSED', n: 10 }]);
    expect(Object.keys(grouped[0])).toEqual(['_id', 'status', 'n']);
    // A later $match reads $regex with $options as find does.
    expect(await conversations().aggregate([{ $project: { status: 1 } }, { $match: { status: { $regex: '^QUEUED$', $options: 'i' } } }]).toArray()).toEqual([{ _id: 4, status: 'queued' }]);
  });

  it('$sort, $skip, $limit, $count, $addFields, $unwind', async () => {
    const page = await conversations().aggregate([{ $match: { companyId } }, { $sort: { createdAt: -1 } }, { $skip: 1 }, { $limit: 2 }, { $project: { _id: 1 } }]).toArray();
    expect(page).toEqual([{ _id: 3 }, { _id: 2 }]);
    expect(await conversations().aggregate([{ $match: { status: 'open' } }, { $count: 'open' }]).toArray()).toEqual([{ open: 3 }]);
    const tagCounts = await conversations()
      .aggregate([{ $unwind: '$tags' }, { $group: { _id: '$tags', n: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray();
    expect(tagCounts).toEqual([{ _id: 'sales', n: 2 }, { _id: 'vip', n: 2 }]);
    const added = await conversations().aggregate([{ $match: { _id: 1 } }, { $addFields: { double: { $multiply: ['$n', 2] } } }, { $set: { tagCount: { $size: '$tags' } } }]).toArray();
    expect(added[0]).toMatchObject({ double: 6, tagCount: 2 });
    expect(await conversations().countDocuments({ _id: 1, double: { $exists: true } })).toBe(0);
  });

  it('$facet runs independent sub-pipelines', async () => {
    const [result] = await conversations()
      .aggregate([
        { $match: { companyId } },
        { $facet: { byStatus: [{ $group: { _id: '$status', n: { $sum: 1 } } }, { $sort: { _id: 1 } }], total: [{ $count: 'n' }], first: [{ $sort: { _id: 1 } }, { $limit: 1 }, { $project: { _id: 1 } }] } },
      ])
      .toArray();
    expect(result).toEqual({
      byStatus: [{ _id: 'closed', n: 1 }, { _id: 'open', n: 2 }, { _id: 'queued', n: 1 }],
      total: [{ n: 4 }],
      first: [{ _id: 1 }],
    });
  });

  it('$dateTrunc honors timezone and startOfWeek (local Sunday evening is not UTC Monday)', async () => {
    const byWeek = await conversations()
      .aggregate([
        { $match: { companyId } },
        { $group: { _id: { $dateTrunc: { date: '$createdAt', unit: 'week', timezone: 'America/New_York', startOfWeek: 'monday' } }, ids: { $push: '$_id' } } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    // 2024-03-10 is the US DST change: the week starting Monday 03-04 began at 05:00Z (EST), the next at 04:00Z (EDT).
    expect(byWeek).toEqual([
      { _id: new Date('2024-03-04T05:00:00Z'), ids: [1, 2] },
      { _id: new Date('2024-03-11T04:00:00Z'), ids: [3] },
      { _id: new Date('2024-03-18T04:00:00Z'), ids: [4] },
    ]);
    const byDay = await conversations()
      .aggregate([
        { $match: { _id: { $in: [1, 2, 3] } } },
        { $project: { day: { $dateTrunc: { date: '$createdAt', unit: 'day', timezone: 'America/New_York' } }, sundayWeek: { $dateTrunc: { date: '$createdAt', unit: 'week' } }, month: { $dateTrunc: { date: '$createdAt', unit: 'month', timezone: '+05:30' } } } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    expect(byDay.map((d) => d.day)).toEqual([new Date('2024-03-10T05:00:00Z'), new Date('2024-03-10T05:00:00Z'), new Date('2024-03-11T04:00:00Z')]);
    expect(byDay.map((d) => d.sundayWeek)).toEqual([new Date('2024-03-10T00:00:00Z'), new Date('2024-03-10T00:00:00Z'), new Date('2024-03-10T00:00:00Z')]);
    expect(byDay[0].month).toEqual(new Date('2024-02-29T18:30:00Z'));
  });

  it('$lookup joins another collection of the same database, without altering it', async () => {
    const rows = await conversations()
      .aggregate([
        { $match: { companyId, agentId: { $ne: null } } },
        { $lookup: { from: 'agents', localField: 'agentId', foreignField: '_id', as: 'agent' } },
        { $unwind: '$agent' },
        { $set: { 'agent.name': { $toUpper: '$agent.name' } } },
        { $project: { _id: 1, agentName: '$agent.name' } },
        { $sort: { _id: 1 } },
      ])
      .toArray();
    expect(rows).toEqual([{ _id: 1, agentName: 'ANN' }, { _id: 2, agentName: 'ANN' }, { _id: 3, agentName: 'BEN' }]);
    const piped = await fx.db
      .collection<Loose>('agents')
      .aggregate([
        { $lookup: { from: 'conversations', let: { a: '$_id' }, pipeline: [{ $match: { $expr: { $eq: ['$agentId', '$$a'] } } }, { $count: 'n' }], as: 'stats' } },
        { $project: { name: 1, n: { $first: '$stats.n' } } },
        { $sort: { name: 1 } },
      ])
      .toArray();
    expect(piped.map((r) => [r.name, r.n])).toEqual([['Ann', 2], ['Ben', 2]]);
    expect((await fx.db.collection<Loose>('agents').findOne({ _id: agentA }))?.name).toBe('Ann');
  });

  it('aggregation cursors are batched with getMore', async () => {
    const many = fx.db.collection<Loose>('manyagg');
    await many.insertMany(Array.from({ length: 130 }, (_, i) => ({ i })));
    const docs = await many.aggregate([{ $sort: { i: -1 } }], { batchSize: 50 }).toArray();
    expect(docs.map((d) => d.i)).toEqual(Array.from({ length: 130 }, (_, i) => 129 - i));
  });

  it('unknown stages and operators are MongoDB errors', async () => {
    await expect(conversations().aggregate([{ $frob: {} }]).toArray()).rejects.toMatchObject({ code: 40324, message: "Unrecognized pipeline stage name: '$frob'" });
    await expect(conversations().aggregate([{ $project: { x: { $frob: 1 } } }]).toArray()).rejects.toMatchObject({ code: 168 });
    await expect(conversations().aggregate([{ $group: { _id: null, x: { $frob: 1 } } }]).toArray()).rejects.toMatchObject({ code: 15952 });
    await expect(conversations().aggregate([{ $match: { n: { $frob: 1 } } }]).toArray()).rejects.toMatchObject({ code: 2 });
    await expect(fx.db.collection<Loose>('empty').aggregate([{ $frob: 1 }]).toArray()).rejects.toMatchObject({ code: 40324 });
    await expect(conversations().aggregate([{ $out: 'copy' }, { $match: {} }]).toArray()).rejects.toMatchObject({ code: 40601 });
  });
});
