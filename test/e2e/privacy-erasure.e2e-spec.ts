import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BSON } from 'mongodb';
import { Types } from 'mongoose';
import * as samples from '../fixtures/media/samples.js';
import { addAgent, createApiKey, registerCompany, type TestAgentLogin, type TestCompany, defineAttributes } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { unzip } from '../support/zip.js';

const NAME = 'Zyxwinda Quorfel';
const EMAIL = 'zyxwinda.quorfel@example.org';
const PHONE = '+14155550177';
/** Words only this contact's messages hold: inbound, reply, note, caption and the file's own bytes. */
const WORDS = ['plumbusfrobnicate', 'marmaladequark', 'snorklewhistle', 'glimmerfaxcaption', 'glimmerfaxbytes', 'Zyxwinda'];

interface PrivacyRequestBody {
  id: string;
  status: string;
  downloadUrl?: string;
}

describe('privacy: erasure reaches every copy (contract section 23)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestCompany;
  let agent: TestAgentLogin;
  let key: string;
  let contactId: string;
  let conversationId: string;
  let idempotencyKey: string;
  let exportId: string;
  let exportUrl: string;
  const today = new Date().toISOString().slice(0, 10);

  const request = async (id: string): Promise<PrivacyRequestBody> =>
    (await t.http.get(`/v1/privacy-requests/${id}`).set(acme.auth).expect(200)).body as PrivacyRequestBody;
  const completed = (id: string) =>
    waitFor(async () => ((await request(id)).status === 'completed' ? request(id) : null), { timeoutMs: 20_000, message: `request ${id}` });
  const conversationsCreated = async () =>
    (await t.http.get('/v1/analytics/metrics').query({ startDate: today, endDate: today }).set(acme.auth).expect(200)).body.totals
      .conversationsCreated as number;
  const searchHits = async (q: string) =>
    (await t.http.get('/v1/messages/search').query({ q }).set(acme.auth).expect(200)).body.data.length as number;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp();
    acme = await registerCompany(t.http, 'Acme');
    agent = await addAgent(t, acme, 'agent');
    key = await createApiKey(t.http, acme, ['messages:write']);
    await defineAttributes(t.http, acme, 'contact', { plan: 'text' });
    const events = ['CHAT_RECEIVED', 'CHAT_SENT', 'NOTE_ADDED', 'CONVERSATION_CREATED'];
    await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: receiver.url('/ok'), events })
      .expect(201);
    // Never answers well: its deliveries stay pending, waiting for a retry an hour away.
    receiver.answer('/down', { status: 503 });
    await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: receiver.url('/down'), events, retryConfig: { maxRetries: 10, backoffMs: 3_600_000 } })
      .expect(201);

    idempotencyKey = `erase-me-${Date.now()}`;
    const inbound = await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .set('Idempotency-Key', idempotencyKey)
      .send({ from: { phone: PHONE, name: NAME }, text: 'plumbusfrobnicate marmaladequark' })
      .expect(201);
    conversationId = inbound.body.data.conversation.id;
    contactId = inbound.body.data.conversation.contactId;
    await t.http
      .patch(`/v1/contacts/${contactId}`)
      .set(acme.auth)
      .send({ email: EMAIL, tags: ['vip'], attributes: { plan: 'Zyxwinda premium' } })
      .expect(200);

    const uploaded = await t.http
      .post('/api/external/media')
      .set('x-api-key', key)
      .attach('file', samples.pdf('glimmerfaxbytes'), { filename: 'glimmerfaxbytes.pdf', contentType: 'application/octet-stream' })
      .expect(201);
    const mediaId = (uploaded.body.data?.id ?? uploaded.body.id) as string;
    await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: PHONE }, type: 'document', mediaId, caption: 'glimmerfaxcaption' })
      .expect(201);
    await t.http
      .post(`/v1/conversations/${conversationId}/messages`)
      .set(acme.auth)
      .send({ private: true, text: 'snorklewhistle about Zyxwinda' })
      .expect(201);
    await t.http
      .post(`/v1/conversations/${conversationId}/messages`)
      .set(acme.auth)
      .send({ text: 'Dear Zyxwinda, marmaladequark is on its way' })
      .expect(201);
    await receiver.received('/ok', 5, 10_000);
    await receiver.received('/down', 1, 10_000);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('exports the contact as a ZIP served by a signed link, notes only when asked for', async () => {
    await t.http.post(`/v1/contacts/${contactId}/export`).set(agent.auth).send({}).expect(403);
    const bad = await t.http.post(`/v1/contacts/${contactId}/export`).set(acme.auth).send({ includeNotes: 'yes' }).expect(400);
    expect(JSON.stringify(bad.body)).toContain('includeNotes');
    const accepted = await t.http.post(`/v1/contacts/${contactId}/export`).set(acme.auth).send({ includeNotes: true }).expect(202);
    expect(accepted.body).toMatchObject({ type: 'export', contactId, status: expect.stringMatching(/pending|running|completed/) });
    exportId = accepted.body.id;
    const done = await completed(exportId);
    expect(done.downloadUrl).toMatch(/^\/v1\/privacy-exports\//);
    exportUrl = done.downloadUrl!;
    const zip = await t.http
      .get(exportUrl)
      .buffer(true)
      .parse((res, callback) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => callback(null, Buffer.concat(chunks)));
      })
      .expect(200);
    const bytes = zip.body as Buffer;
    expect(zip.headers['content-type']).toBe('application/zip');
    expect(bytes.subarray(0, 2).toString()).toBe('PK');
    const entries = unzip(bytes);
    expect(JSON.parse(entries.get('contact.json')!.toString())).toMatchObject({ id: contactId, name: NAME, email: EMAIL, phone: PHONE });
    const [exported] = JSON.parse(entries.get('conversations.json')!.toString()) as {
      id: string;
      messages: { text: string | null; private: boolean }[];
    }[];
    expect(exported.id).toBe(conversationId);
    expect(exported.messages.map((message) => message.text)).toEqual([
      'plumbusfrobnicate marmaladequark',
      null,
      'snorklewhistle about Zyxwinda',
      'Dear Zyxwinda, marmaladequark is on its way',
    ]);
    const [file] = [...entries.keys()].filter((name) => name.startsWith('media/'));
    expect(file).toMatch(/^media\/[0-9a-f]{24}-glimmerfaxbytes\.pdf$/);
    expect(entries.get(file)).toEqual(samples.pdf('glimmerfaxbytes'));
    // A link with one character changed is refused.
    const forged = exportUrl.slice(0, -2) + (exportUrl.endsWith('A') ? 'BB' : 'AA');
    await t.http.get(forged).expect(403);
    // Without includeNotes, the notes stay out.
    const plain = await t.http.post(`/v1/contacts/${contactId}/export`).set(acme.auth).send({}).expect(202);
    const plainDone = await completed(plain.body.id);
    const plainZip = await t.http
      .get(plainDone.downloadUrl!)
      .buffer(true)
      .parse((res, callback) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => callback(null, Buffer.concat(chunks)));
      })
      .expect(200);
    const [withoutNotes] = JSON.parse(
      unzip(plainZip.body as Buffer)
        .get('conversations.json')!
        .toString(),
    ) as { messages: { private: boolean }[] }[];
    expect(withoutNotes.messages).toHaveLength(3);
    expect(withoutNotes.messages.every((message) => !message.private)).toBe(true);
    const listed = await t.http.get('/v1/privacy-requests').query({ contactId, type: 'export' }).set(acme.auth).expect(200);
    expect(listed.body.data.map((item: PrivacyRequestBody) => item.id)).toEqual([plain.body.id, exportId]);
    await t.http.get('/v1/privacy-requests').query({ status: 'done' }).set(acme.auth).expect(400);
  });

  it('refuses erasure to agents, under a legal hold, and for bad input, changing nothing', async () => {
    await t.http.post(`/v1/contacts/${contactId}/erase`).set(agent.auth).send({}).expect(403);
    await t.http.patch(`/v1/contacts/${contactId}`).set(agent.auth).send({ legalHold: true }).expect(403);
    const bad = await t.http.post(`/v1/contacts/${contactId}/erase`).set(acme.auth).send({ reason: 42 }).expect(400);
    expect(JSON.stringify(bad.body)).toContain('reason');
    await t.http.patch(`/v1/contacts/${contactId}`).set(acme.auth).send({ legalHold: true }).expect(200);
    await t.http.post(`/v1/contacts/${contactId}/erase`).set(acme.auth).send({}).expect(409);
    await t.http.patch(`/v1/contacts/${contactId}`).set(acme.auth).send({ legalHold: false }).expect(200);
    const listed = await t.http.get('/v1/privacy-requests').query({ type: 'erase' }).set(acme.auth).expect(200);
    expect(listed.body.data).toEqual([]);
    expect((await t.http.get(`/v1/contacts/${contactId}`).set(acme.auth).expect(200)).body).toMatchObject({ name: NAME, email: EMAIL });
  });

  it('leaves no trace of the contact in any collection, GridFS included, and keeps the analytics', async () => {
    expect(await searchHits('plumbusfrobnicate')).toBeGreaterThan(0);
    const counted = await conversationsCreated();
    expect(counted).toBeGreaterThan(0);
    const db = t.model('Contact').db.db!;
    expect(await db.collection('idempotency_keys').countDocuments({ key: { $regex: idempotencyKey } })).toBe(1);

    // Every collection of the database, read through the driver, GridFS chunks included.
    const traces = async () => {
      const needles = [NAME, EMAIL, PHONE, PHONE.slice(2), ...WORDS];
      const found = new Set<string>();
      for (const { name } of await db.listCollections().toArray()) {
        for (const document of await db.collection(name).find({}).toArray()) {
          const raw = Buffer.from(BSON.serialize(document)).toString('latin1');
          for (const needle of needles) if (raw.includes(needle)) found.add(`${name}: ${needle}`);
        }
      }
      return [...found];
    };
    // The look finds every copy while they are there.
    expect(await traces()).toEqual(
      expect.arrayContaining([
        `contacts: ${NAME}`,
        `contacts: ${EMAIL}`,
        'messages: plumbusfrobnicate',
        'messages: snorklewhistle',
        'messages: glimmerfaxcaption',
        'conversations: marmaladequark',
        `conversations: ${PHONE}`,
        'events: marmaladequark',
        'webhook_deliveries: plumbusfrobnicate',
        'media.chunks: glimmerfaxbytes',
        'media.files: glimmerfaxbytes',
      ]),
    );

    const accepted = await t.http.post(`/v1/contacts/${contactId}/erase`).set(acme.auth).send({ reason: 'GDPR article 17' }).expect(202);
    expect(accepted.body).toMatchObject({ type: 'erase', contactId, reason: 'GDPR article 17' });
    await completed(accepted.body.id);

    expect(await traces()).toEqual([]);
    expect(await db.collection('idempotency_keys').countDocuments({ key: { $regex: idempotencyKey } })).toBe(0);
    expect(await db.collection('privacy_exports.files').countDocuments({})).toBe(0);
    expect(await db.collection('privacy_exports.chunks').countDocuments({})).toBe(0);

    // What is left: the contact as an id, the conversations' metadata, the count.
    const erased = await t.http.get(`/v1/contacts/${contactId}`).set(acme.auth).expect(200);
    expect(erased.body).toMatchObject({
      id: contactId,
      erased: true,
      erasedAt: expect.any(String),
      name: null,
      email: null,
      phone: null,
      tags: [],
      attributes: {},
    });
    await t.http.patch(`/v1/contacts/${contactId}`).set(acme.auth).send({ name: 'Back' }).expect(410);
    await t.http.post(`/v1/contacts/${contactId}/erase`).set(acme.auth).send({}).expect(410);
    const conversation = await t.http.get(`/v1/conversations/${conversationId}`).set(acme.auth).expect(200);
    expect(conversation.body).toMatchObject({
      id: conversationId,
      contactId,
      contact: null,
      channel: expect.any(String),
      status: expect.any(String),
    });
    expect(await conversationsCreated()).toBe(counted);
    expect(await searchHits('plumbusfrobnicate')).toBe(0);
    await t.http.get(exportUrl).expect(404);
    expect((await request(exportId)).downloadUrl).toBeUndefined();

    // Subscribers hear of it, without personal data.
    const events = await db
      .collection('events')
      .find({ companyId: new Types.ObjectId(acme.companyId), type: { $in: ['contact.erased', 'privacy_request.completed'] } })
      .toArray();
    expect(events.find((event) => event.type === 'contact.erased')?.data).toEqual({ contactId, requestId: accepted.body.id });
    expect(events.filter((event) => event.type === 'privacy_request.completed')).toHaveLength(3);

    // The same phone writes again: a new contact.
    const again = await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: PHONE }, text: 'hello again' })
      .expect(201);
    expect(again.body.data.conversation.contactId).not.toBe(contactId);
  });
});
