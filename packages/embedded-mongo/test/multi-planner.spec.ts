import { beforeAll, describe, expect, it } from '@jest/globals';
import { Long, ObjectId, Timestamp, type Document, type Sort } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

/** Every stage of an explained plan, depth first. */
function stagesOf(stage: Document | undefined): Document[] {
  if (!stage) return [];
  return [stage, ...stagesOf(stage.inputStage), ...((stage.inputStages as Document[] | undefined) ?? []).flatMap(stagesOf)];
}

/** A small deterministic generator (mulberry32), so a failing case can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const VIEW_INDEX = 'companyId_1_status_1_lastActivityAt_-1__id_-1';
const STATUSES = ['bot', 'queued', 'human', 'closed'];
const TIERS = ['gold', 'silver', 'bronze'];

describe('embedded engine: the multi-planner (trials, plan cache) and counts from index keys', () => {
  const fx = engineFixture('multiplanner');
  const company = new ObjectId();
  const other = new ObjectId();
  const start = Date.UTC(2026, 0, 1);

  beforeAll(async () => {
    // The app's conversation indexes that a saved view's query can use.
    const c = fx.db.collection<Loose>('conversations');
    for (const key of [
      { companyId: 1, _id: -1 },
      { companyId: 1, status: 1, _id: -1 },
      { companyId: 1, status: 1, lastActivityAt: -1, _id: -1 },
      { companyId: 1, lastActivityAt: -1, _id: -1 },
      { companyId: 1, 'attributes.$**': 1 },
      { companyId: 1, status: 1, 'attributes.$**': 1 },
      { companyId: 1, tags: 1, _id: -1 },
      { companyId: 1, createdAt: 1 },
      { companyId: 1, priority: 1, _id: -1 },
    ])
      await c.createIndex(key as Document);
    const docs = Array.from({ length: 6000 }, (_, i) => ({
      companyId: i < 5700 ? company : other,
      status: STATUSES[i % 4],
      priority: i % 5 === 0 ? 'high' : 'normal',
      tags: i % 7 === 0 ? ['billing', 'vip'] : i % 7 === 1 ? ['billing'] : [],
      // The rare tier only at status human (i % 4 === 2), a few times.
      attributes: { tier: i % 400 === 2 ? 'platinum' : TIERS[i % 3] },
      lastActivityAt: new Date(start + i * 60_000),
      createdAt: new Date(start + i * 1000),
    }));
    await c.insertMany(docs);
  });

  const explainFind = async (filter: Document, sort?: Document, limit?: number) =>
    (await fx.db.command({ explain: { find: 'conversations', filter, sort, limit }, verbosity: 'executionStats' })) as Document;
  const viewFilter = (tier: string, statuses = ['queued', 'human']) => ({
    companyId: company,
    status: { $in: statuses },
    'attributes.tier': { $eq: tier },
  });
  const VIEW_SORT: Sort = { lastActivityAt: -1, _id: -1 };

  it("plans a saved view's page on the sort-providing index, merging its intervals, and rejects the wildcard index", async () => {
    const explained = await explainFind(viewFilter('gold'), VIEW_SORT, 51);
    const stages = stagesOf(explained.queryPlanner.winningPlan);
    expect(stages.map((s) => s.stage)).toEqual(['FETCH', 'SORT_MERGE', 'IXSCAN', 'IXSCAN']);
    expect(stages.filter((s) => s.stage === 'IXSCAN').every((s) => s.indexName === VIEW_INDEX)).toBe(true);
    expect(explained.queryPlanner.rejectedPlans.map((p: Document) => p.inputStage.indexName)).toContain('companyId_1_status_1_attributes.$**_1');
    expect(explained.executionStats.nReturned).toBe(51);
    // The two intervals merged as read: 51 matches, a third of the keys gold (the wildcard plan would read ~950).
    expect(explained.executionStats.totalDocsExamined).toBeLessThan(200);

    const c = fx.db.collection<Loose>('conversations');
    const planned = await c.find(viewFilter('gold'), { sort: VIEW_SORT, limit: 51 }).toArray();
    const scanned = await c.find({ $and: [viewFilter('gold')] }, { sort: VIEW_SORT, limit: 51, hint: { $natural: 1 } }).toArray();
    expect(planned.map((d) => String(d._id))).toEqual(scanned.map((d) => String(d._id)));
  });

  it('caches the choice per query shape, reuses it for other values, and drops it when an index changes', async () => {
    await explainFind(viewFilter('gold'), VIEW_SORT, 20);
    const cached = await explainFind(viewFilter('silver'), VIEW_SORT, 20);
    expect(cached.queryPlanner.rejectedPlans).toEqual([]);
    expect(stagesOf(cached.queryPlanner.winningPlan).find((s) => s.stage === 'IXSCAN')!.indexName).toBe(VIEW_INDEX);

    const c = fx.db.collection<Loose>('conversations');
    await c.createIndex({ companyId: 1, channel: 1 });
    expect((await explainFind(viewFilter('silver'), VIEW_SORT, 20)).queryPlanner.rejectedPlans.length).toBeGreaterThan(0);
    expect((await explainFind(viewFilter('bronze'), VIEW_SORT, 20)).queryPlanner.rejectedPlans).toEqual([]);
    await c.dropIndex('companyId_1_channel_1');
    expect((await explainFind(viewFilter('bronze'), VIEW_SORT, 20)).queryPlanner.rejectedPlans.length).toBeGreaterThan(0);
  });

  it('replans a cached plan that does ten times the works it was chosen with', async () => {
    // Chosen for a common tier: the sort-providing index finds 10 quickly.
    const common = await explainFind(viewFilter('gold', ['human']), VIEW_SORT, 10);
    expect(stagesOf(common.queryPlanner.winningPlan).find((s) => s.stage === 'IXSCAN')!.indexName).toBe(VIEW_INDEX);
    // The rare tier: walking every human conversation in order is far costlier than the wildcard index's 15 keys.
    const rare = await explainFind(viewFilter('platinum', ['human']), VIEW_SORT, 10);
    expect(stagesOf(rare.queryPlanner.winningPlan).find((s) => s.stage === 'IXSCAN')!.indexName).toBe('companyId_1_status_1_attributes.$**_1');
    expect(rare.queryPlanner.rejectedPlans.length).toBeGreaterThan(0);
    expect(rare.executionStats.nReturned).toBe(10);
    expect(rare.executionStats.totalDocsExamined).toBe(15);
  });

  const explainCount = async (query: Document) => {
    const explained = (await fx.db.command({ explain: { count: 'conversations', query }, verbosity: 'executionStats' })) as Document;
    return { stages: stagesOf(explained.queryPlanner.winningPlan), docsExamined: explained.executionStats.totalDocsExamined as number };
  };
  const count = async (query: Document, limit?: number) =>
    (await fx.db.command({ count: 'conversations', query, ...(limit ? { limit } : {}) })).n as number;
  const scannedCount = async (query: Document) =>
    (
      await fx.db
        .collection<Loose>('conversations')
        .find({ $and: [query] }, { hint: { $natural: 1 } })
        .toArray()
    ).length;

  it.each([
    ['an element of an array field (multikey)', { companyId: company, tags: 'billing' }],
    ['several elements of an array field, each document once', { companyId: company, tags: { $in: ['billing', 'vip'] } }],
    ['a time range (withinLast)', { companyId: company, createdAt: { $gte: new Date(start + 3000 * 1000) } }],
    ['a closed time range', { companyId: company, createdAt: { $gt: new Date(start + 10 * 1000), $lte: new Date(start + 4000 * 1000) } }],
    ['an upper bound only', { companyId: company, createdAt: { $lt: new Date(start + 200 * 1000) } }],
  ])('counts %s from index keys alone (COUNT_SCAN), as many as a scan finds', async (_label, query) => {
    const { stages, docsExamined } = await explainCount(query);
    expect(stages.map((s) => s.stage)).toEqual(['COUNT', 'COUNT_SCAN']);
    expect(docsExamined).toBe(0);
    const n = await count(query);
    expect(n).toBe(await scannedCount(query));
    expect(n).toBeGreaterThan(0);
    expect(await count(query, 5)).toBe(5);
  });

  it('counts each document once where a multikey field is not bound to one value, by its keys where it is', async () => {
    const c = fx.db.collection<Loose>('multikey');
    await c.createIndex({ g: 1, tags: 1 });
    await c.insertMany(Array.from({ length: 60 }, (_, i) => ({ g: i % 2, tags: i % 3 === 0 ? ['x', 'y', 'z'] : i % 3 === 1 ? ['x'] : 'y' })));
    const counted = async (query: Document) => {
      const explained = (await fx.db.command({ explain: { count: 'multikey', query }, verbosity: 'executionStats' })) as Document;
      const { n } = await fx.db.command({ count: 'multikey', query });
      return { n, stage: explained.executionStats.executionStages.inputStage.stage, keys: explained.executionStats.totalKeysExamined };
    };
    // g alone: 30 documents behind 50 keys, walked and counted once each.
    expect(await counted({ g: 0 })).toEqual({ n: 30, stage: 'COUNT_SCAN', keys: 50 });
    // tags bound to one value: one key a document, counted by the interval's ends.
    expect(await counted({ g: 0, tags: 'y' })).toEqual({ n: 20, stage: 'COUNT_SCAN', keys: 20 });
    expect(await counted({ g: { $in: [0, 1] }, tags: 'x' })).toEqual({ n: 40, stage: 'COUNT_SCAN', keys: 40 });
    expect((await counted({ g: 1, tags: { $in: ['x', 'y'] } })).n).toBe(30);
  });

  it('brackets a range by its type: values of other types in the index are not counted', async () => {
    const c = fx.db.collection<Loose>('conversations');
    const odd = [{ createdAt: 'tomorrow' }, { createdAt: new Timestamp({ t: 1, i: 1 }) }, { createdAt: 7 }, { createdAt: null }, {}].map((d) => ({
      companyId: other,
      ...d,
    }));
    const { insertedIds } = await c.insertMany(odd);
    try {
      for (const query of [
        { companyId: other, createdAt: { $gte: new Date(start) } },
        { companyId: other, createdAt: { $lt: new Date(start + 1e12) } },
      ]) {
        expect(await count(query)).toBe(await scannedCount(query));
        expect((await explainCount(query)).stages.map((s) => s.stage)).toEqual(['COUNT', 'COUNT_SCAN']);
      }
      // Number ranges are still tested per document (see query/bounds.ts `exactRangeRank`), with the same answer.
      for (const query of [
        { companyId: other, createdAt: { $gt: 5 } },
        { companyId: other, createdAt: { $lte: 7 } },
      ])
        expect(await count(query)).toBe(1);
    } finally {
      await c.deleteMany({ _id: { $in: Object.values(insertedIds) } });
    }
  });
});

describe('embedded engine: planned answers equal a collection scan on random data and filters', () => {
  const fx = engineFixture('multiplanner_random');
  const rand = random(37);
  const pick = <T>(list: T[]): T => list[Math.floor(rand() * list.length)];
  const day = Date.UTC(2026, 5, 1);
  const values: unknown[] = [0, 1, 2, 3, 2.5, -1, new Long(2), Number.NaN, 'a', 'b', 'gold', null, true, new Date(day), new Date(day + 86_400_000)];
  const scalar = () => pick(values);

  beforeAll(async () => {
    const c = fx.db.collection<Loose>('random');
    for (const key of [
      { a: 1, b: 1 },
      { a: 1, c: -1, _id: -1 },
      { tags: 1, a: 1 },
      { 'attributes.$**': 1 },
      { a: 1, 'attributes.$**': 1 },
      { b: 1, _id: 1 },
      { c: 1 },
    ])
      await c.createIndex(key as Document);
    const docs = Array.from({ length: 1500 }, (_, i) => {
      const doc: Document = { _id: i };
      if (rand() < 0.9) doc.a = Math.floor(rand() * 4);
      if (rand() < 0.9) doc.b = scalar();
      if (rand() < 0.9) doc.c = rand() < 0.5 ? Math.floor(rand() * 50) : new Date(day + Math.floor(rand() * 50) * 3_600_000);
      const tags = rand();
      if (tags < 0.4) doc.tags = [pick(['a', 'b', 'gold']), pick(['a', 'b', 1, 2])];
      else if (tags < 0.6) doc.tags = pick(['a', 'b', 1]);
      else if (tags < 0.65) doc.tags = [['a'], 'b'];
      else if (tags < 0.7) doc.tags = [];
      const attributes: Document = {};
      if (rand() < 0.8) attributes.x = rand() < 0.8 ? scalar() : [scalar(), scalar()];
      if (rand() < 0.5) attributes.y = Math.floor(rand() * 10);
      if (rand() < 0.9) doc.attributes = attributes;
      return doc;
    });
    await c.insertMany(docs);
  });

  const FIELDS = ['a', 'b', 'c', 'tags', 'attributes.x', 'attributes.y'];
  function condition(): unknown {
    const r = rand();
    if (r < 0.35) return scalar();
    if (r < 0.55) return { $in: [scalar(), scalar(), scalar()].slice(0, 1 + Math.floor(rand() * 3)) };
    const ops = ['$gt', '$gte', '$lt', '$lte'];
    const low = pick(ops.slice(0, 2));
    const high = pick(ops.slice(2));
    const range = rand();
    if (range < 0.35) return { [low]: scalar() };
    if (range < 0.7) return { [high]: scalar() };
    const v = pick([0, 1, 10, new Date(day)]);
    return { [low]: v, [high]: v instanceof Date ? new Date(day + 86_400_000) : v + 20 };
  }
  function filter(): Document {
    const out: Document = {};
    const n = 1 + Math.floor(rand() * 3);
    for (let i = 0; i < n; i++) out[pick(FIELDS)] = condition();
    return out;
  }
  const SORTS: (Sort | undefined)[] = [undefined, { c: -1, _id: -1 }, { b: 1, _id: 1 }, { a: 1, c: -1, _id: -1 }, { 'attributes.y': 1, _id: 1 }];

  it('returns the same documents, in the same order, and counts the same, for 300 random queries', async () => {
    const c = fx.db.collection<Loose>('random');
    let nonEmpty = 0;
    // Twice each shape: the second run takes the plan cached by the first.
    for (let i = 0; i < 150; i++) {
      const query = filter();
      const sort = pick(SORTS);
      const limit = sort && rand() < 0.6 ? 1 + Math.floor(rand() * 20) : 0;
      const scanned = await c.find({ $and: [query] }, { sort, limit, hint: { $natural: 1 } }).toArray();
      const all = (await c.find({ $and: [query] }, { hint: { $natural: 1 } }).toArray()).length;
      for (let run = 0; run < 2; run++) {
        const planned = await c.find(query, { sort, limit }).toArray();
        const ids = (docs: Document[]) => docs.map((d) => d._id as number);
        const context = JSON.stringify({ query, sort, limit });
        if (sort) expect([context, ids(planned)]).toEqual([context, ids(scanned)]);
        else expect([context, ids(planned).sort((x, y) => x - y)]).toEqual([context, ids(scanned).sort((x, y) => x - y)]);
        expect([context, (await fx.db.command({ count: 'random', query })).n]).toEqual([context, all]);
      }
      if (scanned.length > 0) nonEmpty++;
    }
    // The generator must produce queries that match something, or the comparison proves little.
    expect(nonEmpty).toBeGreaterThan(50);
  });
});

describe('embedded engine: a trial gives up the thread in turns', () => {
  const fx = engineFixture('multiplanner_turns', { limits: { sliceMs: 1 } });

  it('lets other commands run between its turns, and answers as a collection scan does', async () => {
    const c = fx.db.collection<Loose>('turns');
    await c.createIndex({ a: 1 });
    await c.createIndex({ b: 1 });
    // Both plans read the whole collection for 5 matches: the trial runs both to its works limit, then the winner on.
    await c.insertMany(Array.from({ length: 30_000 }, (_, i) => ({ _id: i, a: i, b: 29_999 - i, ...(i % 6_000 === 7 ? { c: 'x' } : {}) })));
    const query = { a: { $gte: 0 }, b: { $gte: 0 }, c: 'x' };
    let pinged = 0;
    let readDone = 0;
    const read = c
      .find(query)
      .toArray()
      .then((docs) => {
        readDone = performance.now();
        return docs;
      });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await fx.db.command({ ping: 1 });
    pinged = performance.now();
    const docs = await read;
    expect(pinged).toBeLessThan(readDone);
    expect(docs.map((d) => d._id).sort((x, y) => x - y)).toEqual([7, 6_007, 12_007, 18_007, 24_007]);
    const explained = (await fx.db.command({
      explain: { find: 'turns', filter: { a: { $gte: 1 }, b: { $gte: 1 }, c: 'x' } },
      verbosity: 'executionStats',
    })) as Document;
    // The shape's plan comes from the cache the trial filled: no trial this time.
    expect(explained.queryPlanner.rejectedPlans).toEqual([]);
    expect(explained.executionStats.nReturned).toBe(5);
  });
});
