import { beforeAll, describe, expect, it } from '@jest/globals';
import { ObjectId, type Collection } from 'mongodb';
import mongoose, { Schema } from 'mongoose';
import { stem } from '../src/query/stemmer.js';
import { parseTextQuery, terms } from '../src/query/text-search.js';
import { engineFixture, type Loose } from './fixture.js';

describe('text search: tokenizing, stop words, stemming', () => {
  it('stems English words as Snowball (Porter2) does', () => {
    const cases: Record<string, string> = {
      running: 'run', conversations: 'convers', caresses: 'caress', ponies: 'poni', ties: 'tie', agreed: 'agre', hopping: 'hop',
      happily: 'happili', generously: 'generous', relational: 'relat', effective: 'effect', adjustable: 'adjust', skies: 'sky',
      dying: 'die', news: 'news', replied: 'repli', helping: 'help', helped: 'help', help: 'help', billing: 'bill', refunds: 'refund',
    };
    for (const [word, expected] of Object.entries(cases)) expect([word, stem(word)]).toEqual([word, expected]);
  });

  it('splits on punctuation, folds case and diacritics, drops stop words, keeps English contractions whole', () => {
    expect(terms("The customer's Café-orders weren't shipped!", 'english')).toEqual(['custom', 'cafe', 'order', 'ship']);
    expect(terms('The Orders', 'none')).toEqual(['the', 'orders']);
  });

  it('parses phrases and negations', () => {
    expect(parseTextQuery({ $search: 'refund "credit card" -paypal' }, 'english')).toMatchObject({
      terms: ['refund', 'credit', 'card'],
      phrases: ['credit card'],
      negatedTerms: ['paypal'],
    });
    expect(() => parseTextQuery({ $search: 'x', $language: 'klingon' }, 'english')).toThrow(/klingon/);
  });
});

describe('text search: text indexes, $text and textScore through the driver', () => {
  const fx = engineFixture('text_search');
  let conversations: Collection<Loose>;
  const company = new ObjectId();
  const other = new ObjectId();

  beforeAll(async () => {
    conversations = fx.db.collection<Loose>('conversations');
    await conversations.createIndex({ companyId: 1, subject: 'text', body: 'text' }, { weights: { subject: 10 }, name: 'search' });
    await conversations.insertMany([
      { _id: 1, companyId: company, subject: 'Refund request', body: 'I want my money back for the order' },
      { _id: 2, companyId: company, subject: 'Shipping', body: 'The order was shipped late, asking for a refund' },
      { _id: 3, companyId: company, subject: 'Login problem', body: 'Cannot log in with my credit card account' },
      { _id: 4, companyId: other, subject: 'Refund', body: 'refunding refunds' },
      { _id: 5, companyId: company, subject: 'Credit card declined', body: 'my credit card was declined' },
    ]);
  });

  it('lists the index as MongoDB stores it, and recreating it is a no-op', async () => {
    const ix = (await conversations.listIndexes().toArray()).find((i) => i.name === 'search');
    expect(Object.keys(ix!)).toEqual(['v', 'key', 'name', 'weights', 'default_language', 'language_override', 'textIndexVersion']);
    expect(ix).toEqual({
      v: 2,
      key: { companyId: 1, _fts: 'text', _ftsx: 1 },
      name: 'search',
      weights: { body: 1, subject: 10 },
      default_language: 'english',
      language_override: 'language',
      textIndexVersion: 3,
    });
    expect(await conversations.createIndex({ companyId: 1, subject: 'text', body: 'text' }, { weights: { subject: 10 }, name: 'search' })).toBe('search');
    await expect(conversations.createIndex({ title: 'text' })).rejects.toMatchObject({ code: 85 });
  });

  it('matches any stemmed term, scores subject matches higher, sorts by textScore', async () => {
    const found = await conversations
      .find({ companyId: company, $text: { $search: 'refunds' } }, { projection: { score: { $meta: 'textScore' }, subject: 1 } })
      .sort({ score: { $meta: 'textScore' } })
      .toArray();
    expect(found.map((d) => d._id)).toEqual([1, 2]);
    expect(found[0].score).toBeGreaterThan(found[1].score);
    expect(Object.keys(found[0])).toEqual(['_id', 'subject', 'score']);
  });

  it('phrases must all appear; negated words exclude; stop words alone match nothing', async () => {
    const ids = async (search: string) => (await conversations.find({ companyId: company, $text: { $search: search } }).toArray()).map((d) => d._id).sort();
    expect(await ids('"credit card"')).toEqual([3, 5]);
    expect(await ids('"credit card" declined')).toEqual([3, 5]);
    expect(await ids('card -login')).toEqual([5]);
    expect(await ids('the and of')).toEqual([]);
    expect(await ids('REFUND')).toEqual([1, 2]);
  });

  it('a compound text index needs equality on its prefix fields; $text needs a text index', async () => {
    await expect(conversations.find({ $text: { $search: 'refund' } }).toArray()).rejects.toMatchObject({ code: 2 });
    await expect(fx.db.collection('plain').find({ $text: { $search: 'x' } }).toArray()).rejects.toMatchObject({ code: 27 });
    await expect(conversations.find({ companyId: company }, { projection: { s: { $meta: 'textScore' } } }).toArray()).rejects.toMatchObject({ code: 40218 });
  });

  it('aggregation: $text in the first $match, textScore in $project and $sort', async () => {
    const out = await conversations
      .aggregate([
        { $match: { companyId: company, $text: { $search: 'credit card declined' } } },
        { $project: { subject: 1, score: { $meta: 'textScore' } } },
        { $sort: { score: { $meta: 'textScore' } } },
      ])
      .toArray();
    expect(out.map((d) => d._id)).toEqual([5, 3]);
    expect(out[0]).toEqual({ _id: 5, subject: 'Credit card declined', score: expect.any(Number) });
  });

  it('keeps the index current through updates and deletes', async () => {
    await conversations.updateOne({ _id: 3 }, { $set: { body: 'password reset' } });
    expect(await conversations.countDocuments({ companyId: company, $text: { $search: 'password' } })).toBe(1);
    expect(await conversations.countDocuments({ companyId: company, $text: { $search: 'account' } })).toBe(0);
    await conversations.deleteOne({ _id: 3 });
    expect(await conversations.countDocuments({ companyId: company, $text: { $search: 'password' } })).toBe(0);
  });

  it('Mongoose: text indexes declared in schemas are built at every start-up, and search works', async () => {
    const schema = new Schema({ title: String, notes: [String], language: String });
    schema.index({ title: 'text', notes: 'text' }, { weights: { title: 5 }, default_language: 'english' });
    for (let start = 0; start < 2; start++) {
      const conn = await mongoose.createConnection(`${fx.engine.uri}text_search_mongoose`).asPromise();
      try {
        const Ticket = conn.model('Ticket', schema);
        await Ticket.init();
        if (start === 0) await Ticket.create([{ title: 'Printer jammed', notes: ['paper stuck'] }, { title: 'Jamming session', notes: ['music'], language: 'none' }]);
        const hits = await Ticket.find({ $text: { $search: 'jamming' } }, { score: { $meta: 'textScore' } }).sort({ score: { $meta: 'textScore' } }).lean();
        expect(hits.map((h) => h.title)).toEqual(['Printer jammed']);
      } finally {
        await conn.close();
      }
    }
  });
});
