import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, ObjectId, type Db, type Document } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index.js';

/** Test documents use numeric and string _ids and free-form fields. */
type Loose = any;

describe('embedded engine: indexes, planner, TTL and namespaces', () => {
  let engine: EmbeddedMongo;
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    engine = await startEmbeddedMongo({ ttlMonitorIntervalMs: 50 });
    client = await new MongoClient(engine.uri).connect();
    db = client.db('idx');
  });

  afterAll(async () => {
    await client.close();
    await engine.stop();
  });

  it('creates, lists and drops indexes', async () => {
    const c = db.collection<Loose>('ix');
    expect(await c.createIndex({ a: 1, b: -1 }, { name: 'ab' })).toBe('ab');
    expect(await c.createIndex({ a: 1, b: -1 }, { name: 'ab' })).toBe('ab');
    await c.createIndex({ t: 1 }, { expireAfterSeconds: 3600 });
    const specs = await c.listIndexes().toArray();
    expect(specs).toEqual([
      { v: 2, key: { _id: 1 }, name: '_id_' },
      { v: 2, key: { a: 1, b: -1 }, name: 'ab' },
      { v: 2, key: { t: 1 }, name: 't_1', expireAfterSeconds: 3600 },
    ]);
    await expect(c.createIndex({ a: 1, b: -1 }, { name: 'other' })).rejects.toMatchObject({ code: 85 });
    await expect(c.createIndex({ z: 1 }, { name: 'ab' })).rejects.toMatchObject({ code: 86 });
    await expect(c.createIndex({ loc: '2dsphere' })).rejects.toMatchObject({ code: 67 });
    await expect(c.createIndex({ '$**': 1 }, { unique: true })).rejects.toMatchObject({ code: 67 });
    await expect(c.createIndex({ name: 1 }, { collation: { locale: 'xx-nowhere' } })).rejects.toMatchObject({ code: 2 });
    await c.dropIndex('ab');
    await expect(c.dropIndex('ab')).rejects.toMatchObject({ code: 27 });
    await c.dropIndexes();
    expect((await c.listIndexes().toArray()).map((i) => i.name)).toEqual(['_id_']);
    await expect(db.collection<Loose>('nope').listIndexes().toArray()).rejects.toMatchObject({ code: 26, codeName: 'NamespaceNotFound' });
  });

  it('collections and databases: create, list, drop', async () => {
    await db.createCollection('made');
    await expect(db.createCollection('made')).rejects.toMatchObject({ code: 48, codeName: 'NamespaceExists' });
    const names = (await db.listCollections({}, { nameOnly: true }).toArray()).map((c) => c.name);
    expect(names).toContain('made');
    expect(await db.listCollections({ name: 'made' }).toArray()).toEqual([expect.objectContaining({ name: 'made', type: 'collection' })]);
    expect(await db.dropCollection('made')).toBe(true);
    const other = client.db('idx_other');
    await other.collection<Loose>('x').insertOne({ a: 1 });
    const { databases } = await client.db('admin').admin().listDatabases();
    expect(databases.map((d) => d.name)).toEqual(expect.arrayContaining(['idx', 'idx_other']));
    await other.dropDatabase();
    expect(await other.collection<Loose>('x').countDocuments()).toBe(0);
  });

  describe('planner', () => {
    const companies = [new ObjectId(), new ObjectId(), new ObjectId()];
    const statuses = ['open', 'queued', 'closed'];
    let docs: Document[];

    beforeAll(async () => {
      const c = db.collection<Loose>('plan');
      await c.createIndex({ companyId: 1, status: 1, createdAt: -1 });
      await c.createIndex({ tags: 1 });
      await c.createIndex({ email: 1 }, { unique: true, sparse: true });
      const base = Date.UTC(2024, 0, 1);
      docs = Array.from({ length: 600 }, (_, i) => ({
        _id: new ObjectId(),
        companyId: companies[i % 3],
        status: statuses[Math.floor(i / 3) % 3],
        // Many equal timestamps, so ties must be resolved by _id.
        createdAt: new Date(base + Math.floor(i / 4) * 60_000),
        n: i % 17,
        tags: i % 5 === 0 ? ['a', 'b'] : i % 5 === 1 ? [] : ['c'],
        ...(i % 10 === 0 ? { email: `u${i}@x.io` } : {}),
      }));
      await c.insertMany(docs);
    });

    const explain = async (cmd: Document) => (await db.command({ explain: cmd, verbosity: 'executionStats' })) as Document;

    it('serves the app list query from the compound index and stops after the page', async () => {
      const filter = { companyId: companies[1], status: 'open' };
      const plan = await explain({ find: 'plan', filter, sort: { createdAt: -1 }, limit: 50 });
      expect(plan.queryPlanner.winningPlan).toMatchObject({ stage: 'FETCH', inputStage: { stage: 'IXSCAN', indexName: 'companyId_1_status_1_createdAt_-1' } });
      expect(plan.executionStats.nReturned).toBe(50);
      expect(plan.executionStats.totalDocsExamined).toBe(50);
      const page = await db.collection<Loose>('plan').find(filter).sort({ createdAt: -1 }).limit(50).toArray();
      const expected = docs
        .filter((d) => d.companyId.equals(companies[1]) && d.status === 'open')
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, 50);
      expect(page.map((d) => d.createdAt)).toEqual(expected.map((d) => d.createdAt));
    });

    it('uses _id lookups and reverse index scans; sorts by time with an _id tiebreaker', async () => {
      const byId = await explain({ find: 'plan', filter: { _id: docs[5]._id } });
      expect(byId.queryPlanner.winningPlan.stage).toBe('IDHACK');
      expect(byId.executionStats.totalDocsExamined).toBe(1);
      const sort = { createdAt: 1, _id: -1 } as const;
      const filter = { companyId: companies[0], status: 'queued' };
      const page = await db.collection<Loose>('plan').find(filter).sort(sort).limit(30).toArray();
      const expected = docs
        .filter((d) => d.companyId.equals(companies[0]) && d.status === 'queued')
        .sort((a, b) => a.createdAt - b.createdAt || (b._id.toHexString() < a._id.toHexString() ? -1 : 1))
        .slice(0, 30);
      expect(page.map((d) => d._id.toHexString())).toEqual(expected.map((d) => d._id.toHexString()));
      const plan = await explain({ find: 'plan', filter, sort, limit: 30 });
      expect(plan.queryPlanner.winningPlan.inputStage).toMatchObject({ stage: 'IXSCAN', direction: 'backward' });
      expect(plan.executionStats.totalDocsExamined).toBe(30);
    });

    it('gives the same answers with and without indexes, for many query shapes', async () => {
      const c = db.collection<Loose>('plan');
      const from = new Date(Date.UTC(2024, 0, 1, 1));
      const shapes: { filter: Document; sort?: Document; skip?: number; limit?: number }[] = [
        { filter: { companyId: companies[2] }, sort: { createdAt: -1, _id: 1 }, limit: 25 },
        { filter: { companyId: companies[2], status: { $in: ['open', 'closed'] } }, sort: { createdAt: -1, _id: -1 }, skip: 5, limit: 20 },
        { filter: { companyId: { $in: companies.slice(0, 2) }, status: 'open', createdAt: { $gte: from } }, sort: { createdAt: 1, _id: 1 } },
        { filter: { companyId: companies[0], status: 'closed', createdAt: { $lt: from } } },
        { filter: { tags: 'a' }, sort: { n: 1, _id: 1 }, limit: 7 },
        { filter: { tags: { $in: ['b', 'c'] }, n: { $gt: 10 } }, sort: { _id: 1 } },
        { filter: { email: { $exists: true } }, sort: { email: 1 } },
        { filter: { email: 'u20@x.io' } },
        { filter: { $or: [{ n: 3 }, { status: 'open' }], companyId: companies[1] }, sort: { createdAt: -1, _id: 1 }, limit: 10 },
        { filter: {}, sort: { createdAt: -1, _id: -1 }, skip: 100, limit: 10 },
        { filter: { n: { $gte: 3, $lte: 5 } }, sort: { status: 1, createdAt: 1, _id: 1 } },
        { filter: { companyId: companies[0], $or: [{ status: 'open' }, { status: 'queued', n: { $lt: 8 } }] }, sort: { createdAt: -1, _id: -1 }, limit: 15 },
        { filter: { $or: [{ createdAt: { $lt: from } }, { createdAt: from, _id: { $lt: docs[300]._id } }], companyId: companies[1] }, sort: { createdAt: -1, _id: -1 } },
        { filter: { $or: [{ tags: 'a' }, { n: 4 }] }, sort: { _id: 1 } },
      ];
      for (const { filter, sort, skip, limit } of shapes) {
        const run = (hint?: Document) => {
          let cursor = c.find(filter, hint ? { hint } : {});
          if (sort) cursor = cursor.sort(sort);
          if (skip) cursor = cursor.skip(skip);
          if (limit) cursor = cursor.limit(limit);
          return cursor.toArray();
        };
        const [planned, scanned] = await Promise.all([run(), run({ $natural: 1 })]);
        const key = (d: Document[]) => d.map((x) => x._id.toHexString());
        if (sort) expect({ filter, sort, ids: key(planned) }).toEqual({ filter, sort, ids: key(scanned) });
        else expect(key(planned).sort()).toEqual(key(scanned).sort());
      }
    });

    it('bounds keyset pagination written with $or, so a later page does not rescan earlier ones', async () => {
      const filter = { companyId: companies[2], status: 'closed' };
      const all = await db.collection<Loose>('plan').find(filter).sort({ createdAt: -1, _id: -1 }).toArray();
      const last = all[40];
      const after = { ...filter, $or: [{ createdAt: { $lt: last.createdAt } }, { createdAt: last.createdAt, _id: { $lt: last._id } }] };
      const page = await db.collection<Loose>('plan').find(after).sort({ createdAt: -1, _id: -1 }).limit(10).toArray();
      expect(page.map((d) => String(d._id))).toEqual(all.slice(41, 51).map((d) => String(d._id)));
      const plan = await explain({ find: 'plan', filter: after, sort: { createdAt: -1, _id: -1 }, limit: 10 });
      expect(plan.queryPlanner.winningPlan.inputStage.inputStage).toMatchObject({ stage: 'IXSCAN', indexName: 'companyId_1_status_1_createdAt_-1' });
      expect(plan.executionStats.totalDocsExamined).toBeLessThan(20);
    });

    it('pushes a leading $match and $sort/$limit of an aggregation through the planner', async () => {
      const plan = await explain({
        aggregate: 'plan',
        pipeline: [{ $match: { companyId: companies[0], status: 'open' } }, { $sort: { createdAt: -1 } }, { $limit: 5 }, { $project: { _id: 1 } }],
        cursor: {},
      });
      expect(plan.queryPlanner.winningPlan.inputStage.stage).toBe('IXSCAN');
      expect(plan.executionStats.totalDocsExamined).toBe(5);
    });
  });

  it('TTL indexes delete expired documents', async () => {
    const c = db.collection<Loose>('sessions');
    await c.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 });
    await c.createIndex({ seenAt: 1 }, { expireAfterSeconds: 3600 });
    await c.insertMany([
      { _id: 1 as never, expiresAt: new Date(Date.now() - 1000) },
      { _id: 2 as never, expiresAt: new Date(Date.now() + 3_600_000) },
      { _id: 3 as never, seenAt: new Date(Date.now() - 7_200_000) },
      { _id: 4 as never, seenAt: 'not a date' },
      { _id: 5 as never },
    ]);
    const deadline = Date.now() + 5000;
    while ((await c.countDocuments()) > 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect((await c.find({}).sort({ _id: 1 }).toArray()).map((d) => d._id)).toEqual([2, 4, 5]);
  });
});
