import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Message } from '../../src/messages/message.schema.js';
import * as samples from '../fixtures/media/samples.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

interface Hit {
  message: { id: string; text: string | null; caption: string | null; conversationId: string; media: Record<string, unknown> | null };
  conversation: { id: string; unreadCount: number; contactId: string };
}

describe('GET /v1/messages/search', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let apiKey: string;
  const m: Record<string, string> = {};
  const conv: Record<string, string> = {};
  let contactAnn: string;
  let middle: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await registerCompany(t.http, 'Acme');
    globex = await registerCompany(t.http, 'Globex');
    apiKey = await createApiKey(t.http, acme, ['messages:write']);
    const globexKey = await createApiKey(t.http, globex, ['messages:write']);
    const inbound = async (name: string, phone: string, text: string, channel = 'whatsapp', key = apiKey) => {
      await tick();
      const { body } = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { phone }, text, channel }).expect(201);
      m[name] = body.data.message.id;
      return body.data.conversation.id as string;
    };
    conv.ann = await inbound('where', '+14155550901', 'Where is my REFUND?');
    conv.annSms = await inbound('approved', '+14155550901', 'Your refund was approved to the credit card ending 4242', 'sms');
    await tick();
    middle = new Date().toISOString();
    conv.ben = await inbound('declined', '+14155550902', 'My credit card was declined, can you help');
    await inbound('cafe', '+14155550902', 'Un café, s’il vous plaît');
    await inbound('cafeUpper', '+14155550903', 'CAFE AU LAIT please');
    await tick();
    const media = await t.http.post('/v1/messages/send-media').set(acme.auth).field('conversationId', conv.ben).field('type', 'image').field('caption', 'Receipt for the refund').attach('file', samples.png(), 'receipt.png').expect(201);
    m.receipt = media.body.id;
    // A private note (another feature writes them: direction "internal") is found too.
    await t.model<Message>(Message.name).collection.insertOne({
      _id: new Types.ObjectId(),
      companyId: new Types.ObjectId(acme.companyId),
      conversationId: new Types.ObjectId(conv.ben),
      channel: 'whatsapp',
      direction: 'internal',
      type: 'text',
      text: 'Note: refund approved by finance',
      caption: null,
      media: null,
      senderType: 'agent',
      senderId: new Types.ObjectId(acme.agentId),
      createdAt: new Date(),
      updatedAt: new Date(),
    } as never);
    m.note = (await t.model<Message>(Message.name).collection.findOne({ direction: 'internal' }))!._id.toHexString();
    await inbound('theirs', '+14155550901', 'refund refund credit card café', 'whatsapp', globexKey);
    contactAnn = (await t.http.get(`/v1/conversations/${conv.ann}`).set(acme.auth).expect(200)).body.contactId;
  });
  afterAll(() => t.close());

  const search = async (query: Record<string, string | number>, company = acme) => {
    const { body } = await t.http.get('/v1/messages/search').query(query).set(company.auth).expect(200);
    return body as { data: Hit[]; nextCursor: string | null };
  };
  const found = async (query: Record<string, string | number>, company = acme) => (await search(query, company)).data.map((hit) => hit.message.id);

  it('finds messages holding every word, in text or caption, newest first, notes included', async () => {
    expect(await found({ q: 'refund' })).toEqual([m.note, m.receipt, m.approved, m.where]);
    expect(await found({ q: 'refund credit' })).toEqual([m.approved]);
    expect(await found({ q: 'credit card' })).toEqual([m.declined, m.approved]);
    expect(await found({ q: 'nothing-like-this' })).toEqual([]);
    expect(await found({ q: '!!!' })).toEqual([]);
  });

  it('is case- and accent-insensitive; a quoted phrase must appear as written', async () => {
    expect(await found({ q: 'cafe' })).toEqual([m.cafeUpper, m.cafe]);
    expect(await found({ q: 'CAFÉ' })).toEqual([m.cafeUpper, m.cafe]);
    expect(await found({ q: 'Refund?' })).toEqual([m.note, m.receipt, m.approved, m.where]);
    expect(await found({ q: '"credit card" declined' })).toEqual([m.declined]);
    expect(await found({ q: '"card credit"' })).toEqual([]);
    expect(await found({ q: '"Café au"' })).toEqual([m.cafeUpper]);
  });

  it('answers each hit with its conversation as the caller sees it, and media with a signed link', async () => {
    const { data } = await search({ q: 'receipt' });
    expect(data).toHaveLength(1);
    expect(data[0].conversation).toMatchObject({ id: conv.ben, unreadCount: 2, lastReadAt: null, lastMessage: expect.any(Object) });
    expect(data[0].message.media).toMatchObject({ fileName: 'receipt.png', downloadUrl: expect.stringMatching(/^\/v1\/media\/signed\//), downloadUrlExpiresAt: expect.any(String) });
  });

  it('filters by conversation, contact, channel and time, together', async () => {
    expect(await found({ q: 'refund', conversationId: conv.ann })).toEqual([m.where]);
    expect(await found({ q: 'refund', contactId: contactAnn })).toEqual([m.approved, m.where]);
    expect(await found({ q: 'refund', contactId: contactAnn, channel: 'SMS' })).toEqual([m.approved]);
    expect(await found({ q: 'refund', contactId: contactAnn, conversationId: conv.ben })).toEqual([]);
    expect(await found({ q: 'refund', after: middle })).toEqual([m.note, m.receipt]);
    expect(await found({ q: 'refund', before: middle })).toEqual([m.approved, m.where]);
    expect(await found({ q: 'refund', after: '2000-01-01', before: middle, channel: 'whatsapp' })).toEqual([m.where]);
  });

  it('walks the hits with cursor, without repeats or gaps', async () => {
    const all = await found({ q: 'refund' });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { data: Hit[]; nextCursor: string | null } = await search({ q: 'refund', limit: 1, ...(cursor ? { cursor } : {}) });
      expect(page.data.length).toBeLessThanOrEqual(1);
      seen.push(...page.data.map((hit) => hit.message.id));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all);
  });

  it('keeps companies apart: their words, ids and contacts find nothing of another', async () => {
    expect(await found({ q: 'refund' }, globex)).toEqual([m.theirs]);
    expect(await found({ q: 'refund', conversationId: conv.ann }, globex)).toEqual([]);
    expect(await found({ q: 'refund', contactId: contactAnn }, globex)).toEqual([]);
    expect(await found({ q: 'refund refund credit card café' })).toEqual([]);
  });

  it('answers 400 naming the field for bad input', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'q'],
      [{ q: '   ' }, 'q'],
      [{ q: 'x'.repeat(201) }, 'q'],
      [{ q: 'refund', conversationId: 'nope' }, 'conversationId'],
      [{ q: 'refund', contactId: '123' }, 'contactId'],
      [{ q: 'refund', after: 'yesterday' }, 'after'],
      [{ q: 'refund', after: '2024-05-02', before: '2024-05-01' }, 'before'],
      [{ q: 'refund', cursor: 'bm90LWEtY3Vyc29y' }, 'cursor'],
      [{ q: 'refund', limit: '0' }, 'limit'],
    ];
    for (const [query, field] of cases) {
      const response = await t.http.get('/v1/messages/search').query(query).set(acme.auth);
      expect({ query, status: response.status }).toEqual({ query, status: 400 });
      expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect((await search({ q: 'x'.repeat(200) })).data).toEqual([]);
    await t.http.get('/v1/messages/search').query({ q: 'refund' }).expect(401);
  });
});
