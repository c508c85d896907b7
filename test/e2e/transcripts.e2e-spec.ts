import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Message } from '../../src/messages/message.schema.js';
import { addAgent, twoCompanies, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** GET /v1/conversations/:id/transcript (contract section 15). */
describe('conversation transcripts', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let conversationId: string;
  let contactId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Europe/Paris' }).expect(200);
    ({ conversationId, contactId } = await conversationWithHistory());
  });
  afterAll(() => t.close());

  /** Stores messages at fixed times straight into the collection (the API stamps the current time). */
  async function seed(id: string, messages: Record<string, unknown>[]): Promise<void> {
    await t.model<Message>(Message.name).collection.insertMany(
      messages.map((message) => ({
        _id: new Types.ObjectId(),
        companyId: new Types.ObjectId(acme.companyId),
        conversationId: new Types.ObjectId(id),
        type: 'text',
        text: null,
        caption: null,
        media: null,
        private: false,
        ...message,
        createdAt: new Date(message.createdAt as string),
        updatedAt: new Date(message.createdAt as string),
      })),
    );
  }

  async function conversationWithHistory(): Promise<{ conversationId: string; contactId: string }> {
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(acme.companyId, { email: uniqueEmail('grace'), name: 'Grace Hopper' });
    const { body } = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    const contactOid = contact._id;
    const agentOid = new Types.ObjectId(agent.agentId);
    await seed(body.id, [
      { direction: 'inbound', senderType: 'contact', senderId: contactOid, text: 'Where is my order?', createdAt: '2026-03-28T22:59:00Z' },
      { direction: 'outbound', senderType: 'bot', senderId: null, text: 'Thanks! An agent will be with you shortly.', createdAt: '2026-03-28T23:00:00Z' },
      { direction: 'internal', senderType: 'agent', senderId: agentOid, text: 'VIP: be quick', private: true, mentions: [], createdAt: '2026-03-29T00:30:00Z' },
      { direction: 'outbound', senderType: 'agent', senderId: agentOid, text: 'It ships today.\nTracking follows.', createdAt: '2026-03-29T01:15:00Z' },
      {
        direction: 'outbound',
        senderType: 'agent',
        senderId: agentOid,
        type: 'document',
        caption: 'Your receipt',
        media: { id: new Types.ObjectId(), fileName: 'receipt.pdf', mimeType: 'application/pdf', size: 10 },
        createdAt: '2026-03-29T01:16:00Z',
      },
      // After the change to summer time (UTC+2 from 2026-03-29 01:00 UTC).
      { direction: 'inbound', senderType: 'contact', senderId: contactOid, text: 'Thank you!', createdAt: '2026-03-29T08:00:00Z' },
    ]);
    return { conversationId: body.id, contactId: contact._id.toHexString() };
  }

  const transcript = (id: string, query = '', auth = acme.auth) => t.http.get(`/v1/conversations/${id}/transcript${query}`).set(auth);

  it('writes one line per message in the company’s time zone, leaving private notes out by default', async () => {
    const response = await transcript(conversationId).expect(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`inline; filename="conversation-${conversationId}.txt"`);
    expect(response.text).toBe(
      [
        '[2026-03-28 23:59] Grace Hopper (contact): Where is my order?',
        '[2026-03-29 00:00] Bot (bot): Thanks! An agent will be with you shortly.',
        '[2026-03-29 03:15] A agent (agent): It ships today.\\nTracking follows.',
        '[2026-03-29 03:16] A agent (agent): [receipt.pdf] Your receipt',
        '[2026-03-29 10:00] Grace Hopper (contact): Thank you!',
        '',
      ].join('\n'),
    );
  });

  it('includes private notes when asked, marked as such', async () => {
    const response = await transcript(conversationId, '?format=text&includePrivate=true').expect(200);
    expect(response.text.split('\n')[2]).toBe('[2026-03-29 01:30] A agent (agent): [private note] VIP: be quick');
    expect(response.text.split('\n')).toHaveLength(7);
  });

  it('answers JSON { conversation, contact, messages } with each sender’s name', async () => {
    const response = await transcript(conversationId, '?format=json').expect(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body.conversation).toMatchObject({ id: conversationId, contactId, status: 'bot', snoozedUntil: null });
    expect(response.body.contact).toMatchObject({ id: contactId, name: 'Grace Hopper' });
    expect(response.body.messages.map((message: { senderName: string; text: string | null; private: boolean }) => [message.senderName, message.text, message.private])).toEqual([
      ['Grace Hopper', 'Where is my order?', false],
      ['Bot', 'Thanks! An agent will be with you shortly.', false],
      ['A agent', 'It ships today.\nTracking follows.', false],
      ['A agent', null, false],
      ['Grace Hopper', 'Thank you!', false],
    ]);
    expect(response.body.messages[3]).toMatchObject({ type: 'document', caption: 'Your receipt', media: { fileName: 'receipt.pdf' } });
    const withNotes = await transcript(conversationId, '?format=json&includePrivate=true').expect(200);
    expect(withNotes.body.messages).toHaveLength(6);
    expect(withNotes.body.messages[2]).toMatchObject({ direction: 'internal', private: true, senderName: 'A agent' });
  });

  it('pages through a long conversation, in order, whole', async () => {
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(acme.companyId, { email: uniqueEmail('long') });
    const { body } = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    const start = Date.parse('2026-01-01T00:00:00Z');
    const count = 1234;
    await seed(
      body.id,
      Array.from({ length: count }, (_, index) => ({
        direction: index % 2 ? 'outbound' : 'inbound',
        senderType: index % 2 ? 'agent' : 'contact',
        senderId: index % 2 ? new Types.ObjectId(acme.agentId) : contact._id,
        text: `#${index}`,
        // Several messages share a millisecond: the order still holds, by id.
        createdAt: new Date(start + Math.floor(index / 3)).toISOString(),
      })),
    );
    const text = await transcript(body.id).expect(200);
    const lines = text.text.trimEnd().split('\n');
    expect(lines).toHaveLength(count);
    expect(lines.map((line) => line.slice(line.lastIndexOf('#')))).toEqual(Array.from({ length: count }, (_, index) => `#${index}`));
    expect(lines[1]).toBe('[2026-01-01 01:00] Acme Admin (agent): #1');
    expect(lines[0]).toMatch(/^\[2026-01-01 01:00\] .+ \(contact\): #0$/);
    const json = await transcript(body.id, '?format=json').expect(200);
    expect(json.body.messages.map((message: { text: string }) => message.text)).toEqual(Array.from({ length: count }, (_, index) => `#${index}`));
  });

  it('names a deleted contact "Contact", with contact null in JSON', async () => {
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(acme.companyId, { email: uniqueEmail('gone') });
    const { body } = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    await seed(body.id, [{ direction: 'inbound', senderType: 'contact', senderId: contact._id, text: 'Hi', createdAt: '2026-05-01T10:00:00Z' }]);
    await t.http.delete(`/v1/contacts/${contact._id.toHexString()}`).set(acme.auth).expect(200);
    expect((await transcript(body.id).expect(200)).text).toBe('[2026-05-01 12:00] Contact (contact): Hi\n');
    expect((await transcript(body.id, '?format=json').expect(200)).body.contact).toBeNull();
  });

  it('any agent may read one; an empty conversation gives an empty transcript', async () => {
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(acme.companyId, { email: uniqueEmail('empty') });
    const { body } = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    expect((await transcript(body.id, '', agent.auth).expect(200)).text).toBe('');
    expect((await transcript(body.id, '?format=json', agent.auth).expect(200)).body.messages).toEqual([]);
  });

  it("answers 404 for another company's conversation or a malformed id, and 400 for a bad format or flag", async () => {
    await transcript(conversationId, '', globex.auth).expect(404);
    await transcript('nope').expect(404);
    const format = await transcript(conversationId, '?format=pdf').expect(400);
    expect(format.body.errors).toEqual([{ field: 'format', message: 'format must be one of the following values: text, json' }]);
    const flag = await transcript(conversationId, '?includePrivate=yes').expect(400);
    expect(flag.body.errors[0].field).toBe('includePrivate');
  });
});
