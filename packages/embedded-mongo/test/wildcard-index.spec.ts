import { beforeAll, describe, expect, it } from '@jest/globals';
import { ObjectId, type Document } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

/** The index stage of an explained plan (null for a collection scan), and the counters. */
function planOf(explained: Document): { index: string | null; docsExamined: number; keysExamined: number } {
  let stage = explained.queryPlanner.winningPlan;
  while (stage && stage.stage !== 'IXSCAN') stage = stage.inputStage;
  return {
    index: stage?.indexName ?? null,
    docsExamined: explained.executionStats.totalDocsExamined,
    keysExamined: explained.executionStats.totalKeysExamined,
  };
}

describe('embedded engine: compound wildcard indexes (MongoDB 7 rules)', () => {
  const fx = engineFixture('wildcard');
  const companies = [new ObjectId(), new ObjectId()];
  const INDEX = 'companyId_1_attributes.$**_1';

  beforeAll(async () => {
    const c = fx.db.collection<Loose>('records');
    await c.createIndex({ companyId: 1, _id: -1 });
    await c.createIndex({ companyId: 1, 'attributes.$**': 1 });
    await c.insertMany(
      Array.from({ length: 400 }, (_, i) => ({
        companyId: companies[i % 2],
        status: i % 4 === 0 ? 'queued' : 'human',
        attributes: {
          ...(i % 5 === 0 ? {} : { plan: i % 3 === 0 ? 'pro' : 'free' }),
          seats: i % 50,
          ...(i % 7 === 0 ? { labels: ['a', `l${i % 3}`, 'a'] } : {}),
          ...(i % 11 === 0 ? { address: { city: i % 2 ? 'Paris' : 'Oslo' } } : {}),
          ...(i % 13 === 0 ? { plan: null } : {}),
        },
      })),
    );
    await c.insertOne({ companyId: companies[0], status: 'bot' });
  });

  const explain = async (filter: Document, extra: Document = {}) =>
    planOf((await fx.db.command({ explain: { find: 'records', filter, ...extra }, verbosity: 'executionStats' })) as Document);

  /** The planned answer equals a collection scan's (same documents; same order when sorted). */
  async function sameAsScan(filter: Document, sort?: Document): Promise<Document[]> {
    const c = fx.db.collection<Loose>('records');
    const [planned, scanned] = await Promise.all([
      c.find(filter, sort ? { sort } : {}).toArray(),
      c.find({ $and: [filter] }, { hint: { $natural: 1 }, ...(sort ? { sort } : {}) }).toArray(),
    ]);
    const ids = (docs: Document[]) => docs.map((d) => String(d._id));
    if (sort) expect(ids(planned)).toEqual(ids(scanned));
    else expect(ids(planned).sort()).toEqual(ids(scanned).sort());
    return planned;
  }

  it('lists the index as declared', async () => {
    const indexes = await fx.db.collection('records').listIndexes().toArray();
    expect(indexes).toEqual(expect.arrayContaining([expect.objectContaining({ name: INDEX, key: { companyId: 1, 'attributes.$**': 1 } })]));
  });

  it('serves equality, $in and ranges on any path under the prefix, reading only the matches', async () => {
    const company = companies[0];
    const pro = await explain({ companyId: company, 'attributes.plan': 'pro' });
    const matches = await sameAsScan({ companyId: company, 'attributes.plan': 'pro' });
    expect(pro).toEqual({ index: INDEX, docsExamined: matches.length, keysExamined: matches.length });
    expect(matches.length).toBeGreaterThan(0);
    for (const filter of [
      { companyId: company, 'attributes.seats': { $gte: 10, $lt: 20 } },
      { companyId: company, 'attributes.plan': { $in: ['pro', 'free'] }, status: 'queued' },
      { companyId: company, 'attributes.address.city': 'Oslo' },
      { $and: [{ companyId: company }, { status: { $in: ['queued', 'human'] } }, { 'attributes.plan': { $eq: 'free' } }] },
    ]) {
      expect((await explain(filter)).index).toBe(INDEX);
      await sameAsScan(filter);
    }
  });

  it('keys each element of an array under its path (multikey per path), once per distinct value', async () => {
    const filter = { companyId: companies[0], 'attributes.labels': 'a' };
    const found = await sameAsScan(filter);
    expect(found.length).toBeGreaterThan(0);
    expect(await explain(filter)).toEqual({ index: INDEX, docsExamined: found.length, keysExamined: found.length });
    // A range on a multikey path is bounded on one side only, and still answers exactly.
    await sameAsScan({ companyId: companies[0], 'attributes.labels': { $gt: 'a', $lte: 'l1' } });
  });

  it('counts a path from the index alone, a multikey one each document once', async () => {
    const count = async (query: Document) => {
      const explained = (await fx.db.command({ explain: { count: 'records', query }, verbosity: 'executionStats' })) as Document;
      const { n } = await fx.db.command({ count: 'records', query });
      return { n, stage: explained.executionStats.executionStages.inputStage.stage, docsExamined: explained.executionStats.totalDocsExamined };
    };
    const company = companies[0];
    for (const query of [{ 'attributes.plan': 'pro' }, { 'attributes.plan': { $in: ['pro', 'free'] } }]) {
      const scanned = await sameAsScan({ companyId: company, ...query });
      expect(await count({ companyId: company, ...query })).toEqual({ n: scanned.length, stage: 'COUNT_SCAN', docsExamined: 0 });
    }
    const labelled = await sameAsScan({ companyId: company, 'attributes.labels': 'a' });
    // A multikey path's keys are de-duplicated by document, as MongoDB's COUNT_SCAN does: still no document read.
    expect(await count({ companyId: company, 'attributes.labels': 'a' })).toEqual({ n: labelled.length, stage: 'COUNT_SCAN', docsExamined: 0 });
    const either = await sameAsScan({ companyId: company, 'attributes.labels': { $in: ['a', 'l1'] } });
    expect(await count({ companyId: company, 'attributes.labels': { $in: ['a', 'l1'] } })).toEqual({
      n: either.length,
      stage: 'COUNT_SCAN',
      docsExamined: 0,
    });
    const queued = await sameAsScan({ companyId: company, 'attributes.plan': 'pro', status: 'queued' });
    expect((await count({ companyId: company, 'attributes.plan': 'pro', status: 'queued' })).n).toBe(queued.length);
  });

  it('never serves what it cannot hold: null, missing, $ne, $nin, $exists false, a whole object', async () => {
    const company = companies[0];
    expect((await sameAsScan({ companyId: company, 'attributes.address': { city: 'Oslo' } })).length).toBeGreaterThan(0);
    for (const filter of [
      { companyId: company, 'attributes.address': { city: 'Oslo' } },
      { companyId: company, 'attributes.address': { $gt: {} } },
      { companyId: company, 'attributes.plan': null },
      { companyId: company, 'attributes.plan': { $ne: 'pro' } },
      { companyId: company, 'attributes.plan': { $nin: ['pro'] } },
      { companyId: company, 'attributes.plan': { $exists: false } },
      { companyId: company, 'attributes.plan': { $in: ['pro', null] } },
    ]) {
      expect((await explain(filter)).index).not.toBe(INDEX);
      await sameAsScan(filter);
    }
  });

  it('is not used for a field outside its prefix, and keeps companies apart', async () => {
    expect((await explain({ companyId: companies[0], status: 'queued' })).index).not.toBe(INDEX);
    const other = await sameAsScan({ companyId: companies[1], 'attributes.plan': 'pro' });
    expect(other.every((doc) => String(doc.companyId) === String(companies[1]))).toBe(true);
  });

  it('answers sorted reads exactly (the order comes from the sort, not from the wildcard value)', async () => {
    await sameAsScan({ companyId: companies[0], 'attributes.seats': { $gte: 5 } }, { 'attributes.seats': -1, _id: 1 });
    await sameAsScan({ companyId: companies[0], 'attributes.plan': 'free' }, { _id: -1 });
  });

  it('stays exact through updates and deletes', async () => {
    const c = fx.db.collection<Loose>('records');
    const doc = await c.findOne({ companyId: companies[0], 'attributes.plan': 'pro' });
    await c.updateOne({ _id: doc._id }, { $set: { 'attributes.plan': 'enterprise' }, $unset: { 'attributes.seats': 1 } });
    expect((await sameAsScan({ companyId: companies[0], 'attributes.plan': 'enterprise' })).map((d) => String(d._id))).toEqual([String(doc._id)]);
    expect((await sameAsScan({ companyId: companies[0], 'attributes.plan': 'pro' })).some((d) => String(d._id) === String(doc._id))).toBe(false);
    await c.deleteOne({ _id: doc._id });
    expect(await sameAsScan({ companyId: companies[0], 'attributes.plan': 'enterprise' })).toEqual([]);
  });

  it('refuses the options MongoDB refuses for wildcard indexes', async () => {
    const c = fx.db.collection<Loose>('refusals');
    await expect(c.createIndex({ 'a.$**': 1 }, { unique: true })).rejects.toMatchObject({ code: 67 });
    await expect(c.createIndex({ 'a.$**': 1 }, { sparse: true })).rejects.toMatchObject({ code: 67 });
    await expect(c.createIndex({ 'a.$**': 1, 'b.$**': 1 })).rejects.toMatchObject({ code: 67 });
    await expect(c.createIndex({ 'a.$**': 'hashed' })).rejects.toMatchObject({ code: 67 });
    await expect(c.createIndex({ 'a$**': 1 })).rejects.toMatchObject({ code: 67 });
  });
});
