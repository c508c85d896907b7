import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, ObjectId, type Collection, type Document } from 'mongodb';
import { foldText, parseTextQuery, terms, tokens } from '../src/query/text-search.js';
import { engineFixture, type Loose } from './fixture.js';

describe('text search: MongoDB 7 tokenizing and folding (text index version 3)', () => {
  it('splits only at Dash, Hyphen, Pattern_Syntax, Quotation_Mark, Terminal_Punctuation and White_Space', () => {
    expect(tokens('order_id=A-17, total: 12€ 🎉 ok?', 'none')).toEqual(['order_id', 'A', '17', 'total', '12€', '🎉', 'ok']);
    expect(tokens('l’été «chaud» — vraiment…', 'none')).toEqual(['l', 'été', 'chaud', 'vraiment']);
    // The ASCII apostrophe belongs to English words only.
    expect(tokens("don't", 'english')).toEqual(["don't"]);
    expect(tokens("don't", 'none')).toEqual(['don', 't']);
  });

  it('folds case (simple folding) and strips Diacritic code points, keeping other marks', () => {
    expect(foldText('Ça COÛTE Ελλάς ΣΊΣΥΦΟΣ')).toBe('ca coute ελλασ σισυφοσ');
    expect(foldText('Straße ẞ')).toBe('straße ß');
    // Devanagari vowel signs are marks but not diacritics: a Hindi word keeps them.
    expect(foldText('की')).toBe('की');
    expect(foldText('Café', { diacriticSensitive: true })).toBe('café');
    expect(foldText('Café', { caseSensitive: true })).toBe('Cafe');
    expect(terms('Crème BRÛLÉE', 'none')).toEqual(['creme', 'brulee']);
  });

  it('reads $search as MongoDB’s parser does: negation after whitespace only, to the next whitespace', () => {
    const q = (search: string) => parseTextQuery({ $search: search }, 'none');
    expect(q('foo-bar')).toMatchObject({ terms: ['foo', 'bar'], negatedTerms: [] });
    expect(q('-foo-bar baz')).toMatchObject({ terms: ['baz'], negatedTerms: ['foo', 'bar'] });
    expect(q('- foo')).toMatchObject({ terms: ['foo'], negatedTerms: [] });
    expect(q('a -"b c" d')).toMatchObject({ terms: ['a', 'd'], negatedPhrases: ['b c'], phrases: [] });
    // An unterminated quote adds its words as terms, and no phrase.
    expect(q('"open phrase')).toMatchObject({ terms: ['open', 'phrase'], phrases: [] });
    expect(q('"x y" "z"')).toMatchObject({ terms: ['x', 'y', 'z'], phrases: ['x y', 'z'] });
    // A tab is not whitespace to the parser: "-a\tb" negates both words.
    expect(q('-a\tb')).toMatchObject({ terms: [], negatedTerms: ['a', 'b'] });
    expect(() => parseTextQuery({ $search: 'x', $caseSensitive: 'yes' }, 'none')).toThrow(/boolean/);
  });
});

describe('text search: a compound text index led by the company, through the driver', () => {
  const fx = engineFixture('text_semantics');
  let messages: Collection<Loose>;
  const acme = new ObjectId();
  const globex = new ObjectId();
  const ids = (docs: Document[]) => docs.map((d) => d._id);
  const search = (companyId: ObjectId, $search: string, extra: Document = {}) =>
    messages
      .find({ companyId, $text: { $search, ...extra } })
      .sort({ _id: 1 })
      .toArray()
      .then(ids);

  beforeAll(async () => {
    messages = fx.db.collection<Loose>('messages');
    await messages.createIndex(
      { companyId: 1, text: 'text', caption: 'text' },
      { name: 'search', default_language: 'none', language_override: 'searchLanguage' },
    );
    await messages.insertMany([
      { _id: 1, companyId: acme, text: 'My order arrived broken' },
      { _id: 2, companyId: acme, text: 'ORDER #123: where is it?', caption: null },
      { _id: 3, companyId: acme, caption: 'Photo of the broken café table' },
      { _id: 4, companyId: acme, text: 'red scarf, please' },
      { _id: 5, companyId: acme, text: 'Über cool', caption: 'über' },
      { _id: 6, companyId: globex, text: 'order order order broken' },
      { _id: 7, companyId: acme, text: ['multi', 'values broken'] },
    ]);
  });

  it('keeps each company’s postings apart', async () => {
    expect(await search(acme, 'order')).toEqual([1, 2]);
    expect(await search(globex, 'order')).toEqual([6]);
    expect(await search(acme, 'broken')).toEqual([1, 3, 7]);
  });

  it('matches any term; phrases all, as substrings after folding; negations exclude', async () => {
    expect(await search(acme, 'order cafe')).toEqual([1, 2, 3]);
    expect(await search(acme, '"order" "broken"')).toEqual([1]);
    expect(await search(acme, '"CAFÉ" "broken"')).toEqual([3]);
    // A phrase is a substring: "car" is inside "scarf" once another term matched.
    expect(await search(acme, '"red" "car"')).toEqual([4]);
    expect(await search(acme, 'car')).toEqual([]);
    expect(await search(acme, 'broken -order')).toEqual([3, 7]);
    expect(await search(acme, 'broken -"the broken"')).toEqual([1, 7]);
    expect(await search(acme, '-order')).toEqual([]);
    expect(await search(acme, '')).toEqual([]);
    // Each string of an array is its own text: a phrase does not span two elements.
    expect(await search(acme, '"multi values"')).toEqual([]);
  });

  it('honours $caseSensitive and $diacriticSensitive', async () => {
    expect(await search(acme, 'ORDER', { $caseSensitive: true })).toEqual([2]);
    expect(await search(acme, '"Über"', { $caseSensitive: true })).toEqual([5]);
    expect(await search(acme, 'uber', { $diacriticSensitive: true })).toEqual([]);
    expect(await search(acme, 'über', { $diacriticSensitive: true })).toEqual([5]);
    expect(await search(acme, 'café', { $diacriticSensitive: true })).toEqual([3]);
  });

  it('follows updates: a changed prefix moves the postings, an unchanged text keeps them', async () => {
    await messages.updateOne({ _id: 4 }, { $set: { companyId: globex } });
    expect(await search(acme, 'scarf')).toEqual([]);
    expect(await search(globex, 'scarf')).toEqual([4]);
    await messages.updateOne({ _id: 4 }, { $set: { companyId: acme, seen: true } });
    await messages.updateOne({ _id: 4 }, { $set: { seen: false } });
    expect(await search(acme, 'scarf')).toEqual([4]);
  });

  it('refuses an array in a prefix field (16675), and queries without equality on the prefix (2)', async () => {
    await expect(messages.insertOne({ _id: 99, companyId: [acme, globex], text: 'x' })).rejects.toMatchObject({ code: 16675 });
    expect(await messages.findOne({ _id: 99 })).toBeNull();
    await expect(messages.find({ companyId: { $in: [acme] }, $text: { $search: 'x' } }).toArray()).rejects.toMatchObject({ code: 2 });
  });
});

describe('text search: a limited sort walks the sort’s index when the search is common', () => {
  const fx = engineFixture('text_plans');
  let messages: Collection<Loose>;
  const company = new ObjectId();
  const COUNT = 3000;
  const docs: Document[] = [];

  beforeAll(async () => {
    messages = fx.db.collection<Loose>('messages');
    await messages.createIndex({ companyId: 1, text: 'text' }, { default_language: 'none' });
    await messages.createIndex({ companyId: 1, createdAt: -1, _id: -1 });
    for (let i = 0; i < COUNT; i++) {
      const words = ['hello'];
      if (i % 3 === 0) words.push('common');
      if (i === 17 || i === 2500) words.push('rare');
      docs.push({ _id: i, companyId: company, createdAt: new Date(1_700_000_000_000 + ((i * 7919) % COUNT) * 1000), text: words.join(' ') });
    }
    await messages.insertMany(docs);
    await messages.insertOne({ _id: 'other', companyId: new ObjectId(), createdAt: new Date(), text: 'common rare' });
  });

  const newest = (word: string, limit: number) =>
    docs
      .filter((d) => (d.text as string).split(' ').includes(word))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, limit)
      .map((d) => d._id);

  const run = async (word: string, limit: number) => {
    const filter = { companyId: company, $text: { $search: `"${word}"` } };
    const found = await messages.find(filter).sort({ createdAt: -1, _id: -1 }).limit(limit).toArray();
    const explained = await fx.db.command({ explain: { find: 'messages', filter, sort: { createdAt: -1, _id: -1 }, limit }, verbosity: 'executionStats' });
    return { ids: found.map((d) => d._id), stats: explained.executionStats as Document };
  };

  it('a common word: the index walk stops after the limit, with the same answer', async () => {
    const { ids, stats } = await run('common', 10);
    expect(ids).toEqual(newest('common', 10));
    expect(stats.executionStages.inputStage.stage).toBe('IXSCAN');
    expect(stats.totalDocsExamined).toBeLessThan(100);
  });

  it('a rare word: its few candidates are read and sorted', async () => {
    const { ids, stats } = await run('rare', 10);
    expect(ids).toEqual(newest('rare', 10));
    expect(stats.executionStages).toMatchObject({ stage: 'SORT', inputStage: { stage: 'TEXT' } });
    expect(stats.totalDocsExamined).toBe(2);
  });

  it('textScore and a sort on it still see every candidate', async () => {
    const found = await messages
      .find({ companyId: company, $text: { $search: 'rare common' } }, { projection: { score: { $meta: 'textScore' }, text: 1 } })
      .sort({ score: { $meta: 'textScore' } })
      .limit(3)
      .toArray();
    expect(found).toHaveLength(3);
    for (const d of found) expect(d.text).toMatch(/rare|common/);
    expect(found[0].score).toBeGreaterThanOrEqual(found[1].score);
    expect(found[1].score).toBeGreaterThanOrEqual(found[2].score);
  });
});

describe('text search: a read that gives up the thread between candidates', () => {
  // Slices so short that the read gives up the thread every few candidates, while another connection writes.
  const fx = engineFixture('text_turns', { limits: { sliceMs: 0.01 } });
  let other: MongoClient;

  beforeAll(async () => {
    other = await new MongoClient(fx.engine.uri).connect();
    await fx.db.collection<Loose>('notes').createIndex({ text: 'text' });
    await fx.db.collection<Loose>('notes').insertMany(Array.from({ length: 3000 }, (_, i) => ({ _id: i, text: i % 2 ? 'apple pear' : 'pear plum' })));
  });
  afterAll(() => other.close());

  it('returns each candidate once, though an update moves it in the postings meanwhile', async () => {
    const notes = other.db('text_turns').collection<Loose>('notes');
    let writing = true;
    // Updating a matched document takes it out of the term's postings and puts it back at their end.
    const writer = (async () => {
      for (let k = 0; writing; k++) await notes.updateOne({ _id: (k % 100) * 2 + 1 }, { $set: { text: k % 2 ? 'apple pear' : 'apple pear kiwi' } });
    })();
    const found = await fx.db.collection<Loose>('notes').find({ $text: { $search: 'apple' } }).toArray();
    writing = false;
    await writer;
    const ids = found.map((d) => d._id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toHaveLength(1500);
  });
});

describe('count: an index range that guarantees the filter is counted by its ends (COUNT_SCAN)', () => {
  const fx = engineFixture('count_scan');
  let items: Collection<Loose>;
  const company = new ObjectId();

  beforeAll(async () => {
    items = fx.db.collection<Loose>('items');
    await items.createIndex({ companyId: 1, status: 1 });
    const statuses = ['bot', 'queued', 'human', 'closed'];
    await items.insertMany(Array.from({ length: 2000 }, (_, i) => ({ companyId: company, status: statuses[i % 4], n: i })));
    await items.insertMany(Array.from({ length: 50 }, () => ({ companyId: new ObjectId(), status: 'human' })));
  });

  it('counts without reading, with skip and limit, and reads when the filter needs a test', async () => {
    expect(await fx.db.command({ count: 'items', query: { companyId: company, status: 'human' } })).toMatchObject({ n: 500 });
    expect(await fx.db.command({ count: 'items', query: { companyId: company, status: { $in: ['bot', 'queued', 'human'] } } })).toMatchObject({ n: 1500 });
    expect(await fx.db.command({ count: 'items', query: { companyId: company, status: 'human' }, skip: 450, limit: 100 })).toMatchObject({ n: 50 });
    expect(await fx.db.command({ count: 'items', query: { companyId: company, status: 'human', n: { $lt: 10 } } })).toMatchObject({ n: 2 });
    const explained = await fx.db.command({ explain: { count: 'items', query: { companyId: company, status: 'queued' } }, verbosity: 'executionStats' });
    expect(explained.queryPlanner.winningPlan).toMatchObject({ stage: 'COUNT', inputStage: { stage: 'COUNT_SCAN' } });
    expect(explained.executionStats.totalDocsExamined).toBe(0);
  });

  it('equality to null is a range of null keys (missing fields included): counted alike', async () => {
    await items.insertMany(Array.from({ length: 5 }, (_, i) => ({ companyId: company, ...(i % 2 ? { status: null } : {}) })));
    const query = { companyId: company, status: null };
    expect(await fx.db.command({ count: 'items', query })).toMatchObject({ n: 5 });
    expect(await fx.db.command({ count: 'items', query: { companyId: company, status: { $eq: null } } })).toMatchObject({ n: 5 });
    const explained = await fx.db.command({ explain: { count: 'items', query }, verbosity: 'executionStats' });
    expect(explained.queryPlanner.winningPlan).toMatchObject({ stage: 'COUNT', inputStage: { stage: 'COUNT_SCAN' } });
    expect(await items.countDocuments({ companyId: company, status: null })).toBe(5);
  });

  it('a condition that repeats a partial index’s filter needs no test: the range alone is counted', async () => {
    await items.createIndex({ companyId: 1, status: 1, n: 1 }, { partialFilterExpression: { flagged: true }, name: 'flagged' });
    await items.updateMany({ companyId: company, n: { $lt: 40 } }, { $set: { flagged: true } });
    const query = { companyId: company, status: 'human', flagged: true };
    expect(await fx.db.command({ count: 'items', query })).toMatchObject({ n: 10 });
    const explained = await fx.db.command({ explain: { count: 'items', query }, verbosity: 'executionStats' });
    expect(explained.queryPlanner.winningPlan).toMatchObject({ stage: 'COUNT', inputStage: { stage: 'COUNT_SCAN', indexName: 'flagged' } });
    // Another condition on the same field is still tested.
    expect(await fx.db.command({ count: 'items', query: { ...query, flagged: { $eq: true } } })).toMatchObject({ n: 10 });
  });
});
