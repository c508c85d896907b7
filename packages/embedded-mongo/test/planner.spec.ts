import { beforeAll, describe, expect, it } from '@jest/globals';
import { Double, Long, ObjectId, type CollationOptions, type Document } from 'mongodb';
import { engineFixture, type Loose } from './fixture.js';

/** The index stage of an explained plan (null for a collection scan or an _id lookup), and the counters. */
function planOf(explained: Document): { index: string | null; docsExamined: number; keysExamined: number } {
  let stage = explained.queryPlanner.winningPlan;
  while (stage && stage.stage !== 'IXSCAN') stage = stage.inputStage;
  return { index: stage?.indexName ?? null, docsExamined: explained.executionStats.totalDocsExamined, keysExamined: explained.executionStats.totalKeysExamined };
}

describe('embedded engine: planner rules (partial indexes, choice among several)', () => {
  const fx = engineFixture('planner');
  const companies = [new ObjectId(), new ObjectId()];

  beforeAll(async () => {
    const conversations = fx.db.collection<Loose>('conversations');
    await conversations.createIndex({ companyId: 1, _id: -1 });
    await conversations.createIndex({ companyId: 1, contactId: 1, channel: 1 }, { unique: true, partialFilterExpression: { isOpen: true }, name: 'one_open' });
    const contacts = Array.from({ length: 50 }, () => new ObjectId());
    // Per contact and channel: several closed conversations and at most one open one.
    await conversations.insertMany(
      Array.from({ length: 600 }, (_, i) => ({
        companyId: companies[i % 2],
        contactId: contacts[i % 50],
        channel: i % 4 < 2 ? 'whatsapp' : 'sms',
        isOpen: i >= 500,
        rating: i % 11,
      })),
    );
    const messages = fx.db.collection<Loose>('messages');
    await messages.createIndex({ companyId: 1, createdAt: 1 });
    await messages.createIndex({ companyId: 1, channel: 1, externalId: 1 }, { unique: true, partialFilterExpression: { externalId: { $type: 'string' } }, name: 'by_external_id' });
    await messages.insertMany(
      Array.from({ length: 400 }, (_, i) => ({
        companyId: companies[i % 2],
        channel: 'whatsapp',
        createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000),
        ...(i % 2 === 0 ? { externalId: `wamid.${i}` } : {}),
        // A string, null or missing: the partial index on `email: { $exists: true }` holds the first two.
        ...(i % 3 === 0 ? { email: `m${i}@x.io` } : i % 3 === 1 ? { email: null } : {}),
      })),
    );
    await messages.createIndex({ companyId: 1, email: 1 }, { partialFilterExpression: { email: { $exists: true } }, name: 'email_exists' });
  });

  const explain = async (collection: string, filter: Document, extra: Document = {}) =>
    planOf((await fx.db.command({ explain: { find: collection, filter, ...extra }, verbosity: 'executionStats' })) as Document);

  /**
   * The planned answer equals a collection scan's (same documents, same order when sorted). The scan's filter is
   * wrapped in `$and`, so it is tested by the general matcher, not by the fast paths the planned side may take.
   */
  async function sameAsScan(collection: string, filter: Document, sort?: Document, limit = 0): Promise<Document[]> {
    const c = fx.db.collection<Loose>(collection);
    const run = (query: Document, hint?: Document) => c.find(query, { ...(hint ? { hint } : {}), ...(sort ? { sort } : {}), limit }).toArray();
    const [planned, scanned] = await Promise.all([run(filter), run({ $and: [filter] }, { $natural: 1 })]);
    const ids = (docs: Document[]) => docs.map((d) => String(d._id));
    if (sort) expect(ids(planned)).toEqual(ids(scanned));
    else expect(ids(planned).sort()).toEqual(ids(scanned).sort());
    return planned;
  }

  it('uses a partial index when the query carries its filter: the open conversation of a contact', async () => {
    const one = await fx.db.collection<Loose>('conversations').findOne({ isOpen: true });
    const filter = { companyId: one.companyId, contactId: one.contactId, channel: one.channel, isOpen: true };
    expect(await explain('conversations', filter)).toEqual({ index: 'one_open', docsExamined: 1, keysExamined: 1 });
    expect(await sameAsScan('conversations', filter)).toHaveLength(1);
    // $eq is the same predicate as the value itself.
    expect((await explain('conversations', { ...filter, isOpen: { $eq: true } })).index).toBe('one_open');
  });

  it('does not use a partial index the query does not imply, and still answers exactly', async () => {
    const one = await fx.db.collection<Loose>('conversations').findOne({ isOpen: true });
    const base = { companyId: one.companyId, contactId: one.contactId, channel: one.channel };
    for (const filter of [base, { ...base, isOpen: false }, { ...base, isOpen: { $ne: false } }, { ...base, isOpen: { $in: [true, false] } }]) {
      expect((await explain('conversations', filter)).index).toBe('companyId_1__id_-1');
      await sameAsScan('conversations', filter);
    }
    // Closed conversations of the contact are not in the partial index: a scan of it would have missed them.
    expect((await sameAsScan('conversations', base)).length).toBeGreaterThan(1);
  });

  it('range filters: a query range inside the filter range implies it, of the same type only', async () => {
    const c = fx.db.collection<Loose>('conversations');
    await c.createIndex({ contactId: 1, rating: 1 }, { partialFilterExpression: { rating: { $gt: 5 } }, name: 'rated' });
    try {
      const contactId = (await c.findOne({}))!.contactId;
      const eligible = [{ rating: { $gte: 8 } }, { rating: 7 }, { rating: { $in: [6, 9] } }, { rating: { $gt: 5, $lt: 9 } }, { $or: [{ rating: 6 }, { rating: { $gt: 8 } }] }];
      const ineligible = [{ rating: { $lt: 8 } }, { rating: { $gte: 5 } }, { rating: { $in: [5, 9] } }, { rating: '9' }, { rating: { $ne: 3 } }, {}];
      for (const cond of eligible) {
        expect({ cond, index: (await explain('conversations', { contactId, ...cond })).index }).toEqual({ cond, index: 'rated' });
        await sameAsScan('conversations', { contactId, ...cond });
      }
      for (const cond of ineligible) {
        expect({ cond, index: (await explain('conversations', { contactId, ...cond })).index }).toEqual({ cond, index: null });
        await sameAsScan('conversations', { contactId, ...cond });
      }
    } finally {
      await c.dropIndex('rated');
    }
  });

  it('holds in a partial index with a collation the documents its filter matches under that collation', async () => {
    const c = fx.db.collection<Loose>('collated');
    const collation = { locale: 'en', strength: 2 };
    await c.insertMany([{ _id: 1, k: 1, status: 'open' }, { _id: 2, k: 1, status: 'OPEN' }, { _id: 3, k: 1, status: 'closed' }]);
    await c.createIndex({ k: 1 }, { name: 'open_k', collation, partialFilterExpression: { status: 'open' } });
    const filter = { k: 1, status: 'OPEN' };
    expect((await explain('collated', filter, { collation })).index).toBe('open_k');
    const found = await c.find(filter, { collation }).toArray();
    const scanned = await c.find({ $and: [filter] }, { collation, hint: { $natural: 1 } }).toArray();
    expect(found.map((d) => d._id).sort()).toEqual([1, 2]);
    expect(scanned.map((d) => d._id).sort()).toEqual([1, 2]);
  });

  it('$type filters are implied only by the same $type, as in MongoDB (not by an equality on a string)', async () => {
    const filter = { companyId: companies[0], channel: 'whatsapp', externalId: 'wamid.10' };
    const asMongoDb = await explain('messages', filter);
    expect(asMongoDb.index).toBe('companyId_1_createdAt_1');
    expect(asMongoDb.docsExamined).toBe(200);
    for (const type of ['string', 2, ['string']]) {
      const typed = { ...filter, externalId: { $eq: 'wamid.10', $type: type } };
      expect(await explain('messages', typed)).toEqual({ index: 'by_external_id', docsExamined: 1, keysExamined: 1 });
      expect(await sameAsScan('messages', typed)).toHaveLength(1);
    }
    expect((await explain('messages', { ...filter, externalId: { $eq: 'wamid.10', $type: 'int' } })).index).toBe('companyId_1_createdAt_1');
  });

  it('$exists: true filters are implied by non-null comparisons, $ne: null and $exists itself', async () => {
    const eligible = [{ email: 'm3@x.io' }, { email: { $ne: null } }, { email: { $exists: true } }, { email: { $gt: 'm' } }, { email: { $in: ['m3@x.io', 'm6@x.io'] } }, { email: { $type: 'string' } }];
    const ineligible = [{ email: null }, { email: { $in: ['m3@x.io', null] } }, { email: { $exists: false } }];
    for (const cond of eligible) {
      expect({ cond, index: (await explain('messages', { companyId: companies[1], ...cond })).index }).toEqual({ cond, index: 'email_exists' });
      await sameAsScan('messages', { companyId: companies[1], ...cond });
    }
    for (const cond of ineligible) {
      expect({ cond, index: (await explain('messages', { companyId: companies[1], ...cond })).index }).toEqual({ cond, index: 'companyId_1_createdAt_1' });
      await sameAsScan('messages', { companyId: companies[1], ...cond });
    }
  });

  it('answers exactly when equality conditions are left to the index or the _id lookup', async () => {
    const c = fx.db.collection<Loose>('exact');
    await c.createIndex({ g: 1, v: 1 });
    await c.createIndex({ tags: 1 });
    await c.insertMany([
      { _id: 1 as never, g: 'a', v: 1, tags: ['x', 'y'] },
      { _id: 2 as never, g: 'a', v: Long.fromNumber(1), tags: 'x' },
      { _id: 3 as never, g: 'a', v: new Double(1), tags: [['x']] },
      { _id: 4 as never, g: 'a', v: 2 },
      { _id: 5 as never, g: 'b', v: 1, tags: [] },
      { _id: 6 as never, g: 'a', v: null },
      { _id: 7 as never, g: 'a' },
      { _id: 8 as never, g: 'a', v: Number.NaN },
      { _id: 9 as never, g: 'A', v: 1 },
    ]);
    const shapes: Document[] = [
      { g: 'a', v: 1 },
      { g: 'a', v: { $in: [1, 2, 1] } },
      { g: 'a', v: { $eq: Long.fromNumber(2) } },
      { g: 'a', v: null },
      { g: 'a', v: Number.NaN },
      { g: { $in: ['a', 'b'] }, v: 1, _id: { $gt: 1 } },
      { $and: [{ v: 2 }], g: 'a', v: 1 },
      { g: 'a', $and: [{ v: 2 }] },
      { tags: 'x' },
      { tags: { $in: ['x', 'y'] } },
      { _id: { $in: [1, 2, 5, 2] }, g: 'a' },
      { _id: 5, g: 'a' },
      { _id: { $in: [1, 1] } },
    ];
    for (const filter of shapes) await sameAsScan('exact', filter, { _id: 1 });
    expect((await c.find({ g: 'a', v: { $in: [1, 2, 1] } }).toArray()).map((d) => d._id).sort()).toEqual([1, 2, 3, 4]);
    expect((await c.find({ _id: { $in: [1, 1] } }).toArray()).map((d) => d._id)).toEqual([1]);
    expect(await c.find({ $and: [{ v: 2 }], g: 'a', v: 1 }).toArray()).toEqual([]);
    // Equality without mingo (what remains after the scan, or a whole simple filter) keeps MongoDB's semantics.
    const scanned = async (filter: Document, collation?: CollationOptions) =>
      (await c.find(filter, { hint: { $natural: 1 }, ...(collation ? { collation } : {}) }).toArray()).map((d) => d._id).sort();
    expect(await scanned({ tags: 'x' })).toEqual([1, 2]);
    expect(await scanned({ v: 1 })).toEqual([1, 2, 3, 5, 9]);
    expect(await scanned({ v: { $in: [2, Number.NaN] } })).toEqual([4, 8]);
    expect(await scanned({ g: 'a', v: { $eq: 1 } }, { locale: 'en', strength: 2 })).toEqual([1, 2, 3, 9]);
    // A case-insensitive query cannot use the binary index for its strings, and still finds both spellings.
    expect((await c.find({ g: 'a', v: 1 }, { collation: { locale: 'en', strength: 2 } }).toArray()).map((d) => d._id).sort()).toEqual([1, 2, 3, 9]);
  });

  it('chooses the index that serves the most of the query, whatever the declaration order', async () => {
    const c = fx.db.collection<Loose>('choice');
    await c.createIndex({ a: 1 });
    await c.createIndex({ a: 1, t: 1 });
    await c.createIndex({ a: 1, b: 1 });
    await c.createIndex({ a: 1, b: 1, t: -1 });
    await c.createIndex({ a: 1, k: 1 }, { partialFilterExpression: { live: true }, name: 'live' });
    await c.insertMany(Array.from({ length: 300 }, (_, i) => ({ a: i % 3, b: i % 5, t: i, live: i % 10 === 0, k: 1 })));
    const cases: { filter: Document; sort?: Document; limit?: number; index: string; docsExamined?: number }[] = [
      // Two equality fields and the sort beat one equality field with the sort.
      { filter: { a: 1, b: 2 }, sort: { t: -1 }, limit: 5, index: 'a_1_b_1_t_-1', docsExamined: 5 },
      // A range after the equality prefix beats an index giving only the equality.
      { filter: { a: 1, t: { $gte: 290 } }, index: 'a_1_t_1', docsExamined: 3 },
      // The sort order, so that the scan stops after the limit.
      { filter: { a: 2 }, sort: { t: 1 }, limit: 4, index: 'a_1_t_1', docsExamined: 4 },
      // Equal service: the smaller (partial) index.
      { filter: { a: 0, live: true }, index: 'live', docsExamined: 10 },
    ];
    for (const { filter, sort, limit, index, docsExamined } of cases) {
      const plan = await explain('choice', filter, { ...(sort ? { sort } : {}), ...(limit ? { limit } : {}) });
      expect({ filter, index: plan.index }).toEqual({ filter, index });
      if (docsExamined !== undefined) expect({ filter, docsExamined: plan.docsExamined }).toEqual({ filter, docsExamined });
      await sameAsScan('choice', filter, sort, limit);
    }
  });
});
