import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ConversationsRepository } from '../../src/conversations/conversations.repository.js';
import { MissingTenantFilterError } from '../../src/database/tenancy/tenant-scope.plugin.js';
import { Message } from '../../src/messages/message.schema.js';
import { MessageView } from '../../src/messages/message.view.js';
import { addAgent, createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/**
 * The conversations and messages pages read only the fields their views show, through the driver
 * (TenantRepository.findPlain): a page must still show every record exactly as a full read of it does.
 */
describe('pages read for their views', () => {
  let t: TestApp;
  let acme: TestCompany;
  let apiKey: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await registerCompany(t.http, 'Acme');
    apiKey = await createApiKey(t.http, acme, ['messages:write']);
  });
  afterAll(() => t.close());

  const inbound = async (phone: string, text: string, extra: Record<string, unknown> = {}) => {
    const { body } = await t.http.post('/api/external/messages').set('x-api-key', apiKey).send({ from: { phone, name: `Caller ${phone}` }, text, ...extra }).expect(201);
    return body.data as { message: { id: string }; conversation: { id: string } };
  };
  const reply = async (conversationId: string, text: string) =>
    (await t.http.post(`/v1/conversations/${conversationId}/messages`).set(acme.auth).send({ text }).expect(201)).body as { id: string };

  it('shows every conversation of a page as GET /v1/conversations/:id shows it, in every state', async () => {
    const supervisor = await addAgent(t, acme, 'supervisor');
    const assigned = await inbound('+14155550101', 'Hello');
    await reply(assigned.conversation.id, 'Hi there');
    await t.http.post(`/v1/conversations/${assigned.conversation.id}/assign`).set(acme.auth).send({ agentId: supervisor.agentId }).expect(200);
    const tagged = await inbound('+14155550102', 'Question');
    await t.http.patch(`/v1/conversations/${tagged.conversation.id}`).set(acme.auth).send({ tags: ['vip'], subject: 'Refund', priority: 'high', status: 'queued' }).expect(200);
    const closed = await inbound('+14155550103', 'Bye');
    await t.http.post(`/v1/conversations/${closed.conversation.id}/close`).set(acme.auth).send({ reason: 'solved' }).expect(200);
    await inbound('+14155550104', 'Just arrived');

    const page = await t.http.get('/v1/conversations?limit=3').set(acme.auth).expect(200);
    const next = await t.http.get(`/v1/conversations?limit=3&startAfter=${page.body.nextCursor}`).set(acme.auth).expect(200);
    const listed = [...page.body.data, ...next.body.data];
    expect(listed).toHaveLength(4);
    for (const conversation of listed) {
      // A single GET also says where a queued conversation stands; a page does not.
      const { queue: _queue, ...single } = (await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200)).body;
      expect(conversation).toEqual(single);
      expect(Object.keys(conversation)).toEqual(Object.keys(single));
    }
    expect(listed.find((c) => c.id === assigned.conversation.id)).toMatchObject({ status: 'human', assignedBy: { kind: 'agent', id: acme.agentId } });
    expect(listed.find((c) => c.id === tagged.conversation.id)).toMatchObject({ tags: ['vip'], subject: 'Refund', priority: 'high', status: 'queued' });
    expect(listed.find((c) => c.id === closed.conversation.id)).toMatchObject({ status: 'closed', closeReason: 'solved' });
  });

  it('shows every message of a page as the view of its full stored record', async () => {
    const first = await inbound('+14155550201', 'Where is my order?', { externalId: 'wamid.page-reads-1' });
    const conversationId = first.conversation.id;
    const sent = await reply(conversationId, 'It ships today');
    await t.http.post(`/api/external/messages/${sent.id}/status`).set('x-api-key', apiKey).send({ status: 'failed', externalId: 'wamid.out-1', error: { code: '131026', message: 'Message undeliverable' } }).expect(200);
    await reply(conversationId, 'Anything else?');
    await inbound('+14155550201', 'No, thanks');

    const page = await t.http.get(`/v1/conversations/${conversationId}/messages?limit=3`).set(acme.auth).expect(200);
    const older = await t.http.get(`/v1/conversations/${conversationId}/messages?cursor=${page.body.nextCursor}`).set(acme.auth).expect(200);
    const listed = [...older.body.data, ...page.body.data];
    const stored = await t.model<Message>(Message.name).find({ companyId: acme.companyId, conversationId }).sort({ createdAt: 1, _id: 1 }).lean();
    expect(listed).toEqual(JSON.parse(JSON.stringify(stored.map((message) => MessageView.from(message as never)))));
    expect(listed.map((message) => Object.keys(message))).toEqual(stored.map((message) => Object.keys(MessageView.from(message as never))));
    expect(listed.find((message) => message.id === sent.id).delivery).toMatchObject({ status: 'failed', externalId: 'wamid.out-1', error: { code: '131026' } });
    expect(listed[0].externalId).toBe('wamid.page-reads-1');
  });

  it('answers an empty messages page for a conversation without messages there, and 404 (before any 400) for one not of the company', async () => {
    const globex = await registerCompany(t.http, 'Globex');
    const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Quiet', phone: '+14155550301' }).expect(201);
    const quiet = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201);
    const empty = await t.http.get(`/v1/conversations/${quiet.body.id}/messages`).set(acme.auth).expect(200);
    expect(empty.body).toEqual({ data: [], nextCursor: null });
    const talked = await inbound('+14155550302', 'Hello');
    const before = await t.http.get(`/v1/conversations/${talked.conversation.id}/messages?before=2001-01-01T00:00:00Z`).set(acme.auth).expect(200);
    expect(before.body).toEqual({ data: [], nextCursor: null });

    for (const id of [talked.conversation.id, '6650f0c2a1b2c3d4e5f60718', 'nope']) {
      await t.http.get(`/v1/conversations/${id}/messages`).set(globex.auth).expect(404);
      await t.http.get(`/v1/conversations/${id}/messages?cursor=bm90LWEtY3Vyc29y`).set(globex.auth).expect(404);
    }
    await t.http.get(`/v1/conversations/${talked.conversation.id}/messages?cursor=bm90LWEtY3Vyc29y`).set(acme.auth).expect(400);
  });

  it('refuses a plain read or write without a company, as the tenant plugin refuses a Mongoose query', async () => {
    const conversations = t.app.get(ConversationsRepository);
    await expect(conversations.findPlain(undefined as never, {})).rejects.toThrow(MissingTenantFilterError);
    // recordMessage writes through the driver alone (updateAsIs).
    const last = { id: new Types.ObjectId(), direction: 'inbound', senderType: 'contact', type: 'text', preview: 'hi', createdAt: new Date() } as const;
    await expect(conversations.recordMessage(null as never, new Types.ObjectId(), { at: last.createdAt, isResponse: false, last })).rejects.toThrow(MissingTenantFilterError);
  });
  describe('a limited plain read', () => {
    /** Conversations of a company no other test sees, with a subject of `subjectBytes` each; the driver's Db spied on. */
    const arrange = async (count: number, subjectBytes: number) => {
      const companyId = new Types.ObjectId();
      const model = t.model<Conversation>(Conversation.name);
      const at = new Date();
      await model.collection.insertMany(
        Array.from({ length: count }, (_, i) => ({ companyId, contactId: new Types.ObjectId(), channel: 'whatsapp', status: 'open', subject: `${i}`.padEnd(subjectBytes, '.'), createdAt: at, updatedAt: at })),
      );
      const db = model.db.db!;
      const command = jest.spyOn(db, 'command');
      const expected = await model.collection.find({ companyId }, { sort: { _id: -1 }, projection: { subject: 1 } }).toArray();
      return { companyId, command, expected };
    };
    const commandNames = (command: { mock: { calls: unknown[][] } }) => command.mock.calls.map(([sent]) => Object.keys(sent as object)[0]);

    it('is one find command answering what a cursor answers', async () => {
      const { companyId, command, expected } = await arrange(3, 10);
      try {
        const read = await t.app.get(ConversationsRepository).findPlain(companyId, {}, { sort: { _id: -1 }, projection: { subject: 1 }, limit: 5 });
        expect(read).toEqual(expected);
        expect(commandNames(command)).toEqual(['find']);
        expect(command.mock.calls[0][0]).toMatchObject({ filter: { companyId }, limit: 5, batchSize: 5, sort: { _id: -1 } });
      } finally {
        command.mockRestore();
      }
    });

    it('closes the server cursor and reads through a cursor when a first batch of 16 MiB does not hold the answer', async () => {
      const { companyId, command, expected } = await arrange(3, 7 * 1024 * 1024);
      try {
        const read = await t.app.get(ConversationsRepository).findPlain(companyId, {}, { sort: { _id: -1 }, projection: { subject: 1 }, limit: 3 });
        expect(read.map((conversation) => conversation._id)).toEqual(expected.map((conversation) => conversation._id));
        expect(commandNames(command)).toEqual(['find', 'killCursors']);
        const [, kill] = command.mock.calls.map(([sent]) => sent as { killCursors: string; cursors: unknown[] });
        expect(kill.killCursors).toBe('conversations');
        expect(Number(kill.cursors[0])).not.toBe(0);
      } finally {
        command.mockRestore();
      }
    });
  });
});
