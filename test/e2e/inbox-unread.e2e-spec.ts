import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ReadMarker } from '../../src/conversations/read-marker.schema.js';
import { addAgent, createApiKey, registerCompany, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

describe('unread state: read markers per agent, unreadCount, lastReadAt, counts', () => {
  let t: TestApp;
  let acme: TestCompany;
  let apiKey: string;
  let ann: TestAgentLogin;
  let bob: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await registerCompany(t.http, 'Acme');
    apiKey = await createApiKey(t.http, acme, ['messages:write']);
    ann = await addAgent(t, acme, 'agent');
    bob = await addAgent(t, acme, 'agent');
  });
  afterAll(() => t.close());

  const inbound = async (phone: string, text: string, key = apiKey) => {
    await tick();
    const { body } = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { phone }, text, channel: 'whatsapp' }).expect(201);
    return body.data as { message: { id: string }; conversation: { id: string } };
  };
  const reply = async (id: string, auth = acme.auth) => {
    await tick();
    return (await t.http.post(`/v1/conversations/${id}/messages`).set(auth).send({ text: 'on it' }).expect(201)).body as { id: string };
  };
  const get = async (id: string, auth: { Authorization: string }) => (await t.http.get(`/v1/conversations/${id}`).set(auth).expect(200)).body;
  const read = (id: string, auth: { Authorization: string }, body: Record<string, unknown> = {}) => t.http.post(`/v1/conversations/${id}/read`).set(auth).send(body);
  const counts = async (auth: { Authorization: string }) => (await t.http.get('/v1/conversations/counts').set(auth).expect(200)).body;

  it('each agent has its own marker: unread counts inbound messages after it, only forward', async () => {
    const first = await inbound('+14155550701', 'one');
    const id = first.conversation.id;
    const second = await inbound('+14155550701', 'two');
    await reply(id);
    const third = await inbound('+14155550701', 'three');
    for (const agent of [ann, bob]) expect(await get(id, agent.auth)).toMatchObject({ unreadCount: 3, lastReadAt: null });

    const annRead = await read(id, ann.auth).expect(200);
    expect(annRead.body).toEqual({ conversationId: id, lastReadMessageId: third.message.id, lastReadAt: expect.any(String), unreadCount: 0 });
    expect(await get(id, ann.auth)).toMatchObject({ unreadCount: 0, lastReadAt: annRead.body.lastReadAt });
    expect(await get(id, bob.auth)).toMatchObject({ unreadCount: 3, lastReadAt: null });

    // Bob reads up to the second message: the third is still unread for him.
    expect((await read(id, bob.auth, { messageId: second.message.id }).expect(200)).body).toMatchObject({ lastReadMessageId: second.message.id, unreadCount: 1 });

    // A new inbound message is unread for both; an agent's own reply is not.
    await inbound('+14155550701', 'four');
    await reply(id, ann.auth);
    expect(await get(id, ann.auth)).toMatchObject({ unreadCount: 1 });
    expect(await get(id, bob.auth)).toMatchObject({ unreadCount: 2 });

    // Markers only move forward: an older message answers the marker as it stands.
    const back = await read(id, ann.auth, { messageId: first.message.id }).expect(200);
    expect(back.body).toEqual({ conversationId: id, lastReadMessageId: third.message.id, lastReadAt: annRead.body.lastReadAt, unreadCount: 1 });
    expect(await t.model<ReadMarker>(ReadMarker.name).collection.countDocuments({ conversationId: new Types.ObjectId(id) })).toBe(2);

    // The list, and the answers of changes, show the same for their caller.
    const listed = await t.http.get('/v1/conversations').query({ limit: 100 }).set(bob.auth).expect(200);
    expect(listed.body.data.find((c: { id: string }) => c.id === id)).toMatchObject({ unreadCount: 2, lastReadAt: expect.any(String) });
    const patched = await t.http.patch(`/v1/conversations/${id}`).set(bob.auth).send({ priority: 'high' }).expect(200);
    expect(patched.body).toMatchObject({ priority: 'high', unreadCount: 2 });
  });

  it('refuses a message of another conversation (400) and another company’s conversation (404)', async () => {
    const mine = await inbound('+14155550702', 'hello');
    const other = await inbound('+14155550703', 'hello');
    const refused = await read(mine.conversation.id, ann.auth, { messageId: other.message.id }).expect(400);
    expect(refused.body.errors).toEqual([{ field: 'messageId', message: 'messageId is not a message of this conversation' }]);
    expect((await read(mine.conversation.id, ann.auth, { messageId: 'nope' }).expect(400)).body.errors[0].field).toBe('messageId');
    await read(mine.conversation.id, ann.auth, { messageId: other.message.id, extra: 1 }).expect(400);

    const globex = await registerCompany(t.http, 'Globex');
    await read(mine.conversation.id, globex.auth).expect(404);
    await read('nope', globex.auth).expect(404);
    expect(await t.model<ReadMarker>(ReadMarker.name).collection.countDocuments({ companyId: new Types.ObjectId(globex.companyId) })).toBe(0);
  });

  it('a conversation without messages has nothing to read', async () => {
    const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Quiet', phone: '+14155550704' }).expect(201);
    const started = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201);
    expect((await read(started.body.id, ann.auth).expect(200)).body).toEqual({ conversationId: started.body.id, lastReadMessageId: null, lastReadAt: null, unreadCount: 0 });
  });

  describe('GET /v1/conversations/counts', () => {
    let bay: TestCompany;
    let bayKey: string;
    let carl: TestAgentLogin;
    let dana: TestAgentLogin;

    beforeAll(async () => {
      bay = await registerCompany(t.http, 'Bay');
      bayKey = await createApiKey(t.http, bay, ['messages:write']);
      carl = await addAgent(t, bay, 'agent');
      dana = await addAgent(t, bay, 'agent');
    });

    const open = async (phone: string) => (await inbound(phone, 'hello', bayKey)).conversation.id;

    it('counts open conversations by status, unassigned, snoozed, and the caller’s own and unread ones', async () => {
      expect(await counts(bay.auth)).toEqual({ bot: 0, queued: 0, human: 0, unassigned: 0, snoozed: 0, mine: 0, mineUnread: 0 });
      await open('+14155550801');
      await open('+14155550802');
      const queued = await open('+14155550803');
      await t.http.patch(`/v1/conversations/${queued}`).set(bay.auth).send({ status: 'queued' }).expect(200);
      const carls = await open('+14155550804');
      const danas = await open('+14155550805');
      const closed = await open('+14155550806');
      await t.http.post(`/v1/conversations/${carls}/assign`).set(bay.auth).send({ agentId: carl.agentId }).expect(200);
      await t.http.post(`/v1/conversations/${danas}/assign`).set(bay.auth).send({ agentId: dana.agentId }).expect(200);
      await t.http.post(`/v1/conversations/${closed}/close`).set(bay.auth).send({}).expect(200);
      await t.model<Conversation>(Conversation.name).collection.updateOne({ _id: new Types.ObjectId(queued) }, { $set: { snoozedUntil: new Date(Date.now() + 60_000) } });

      expect(await counts(carl.auth)).toEqual({ bot: 2, queued: 1, human: 2, unassigned: 3, snoozed: 1, mine: 1, mineUnread: 1 });
      expect(await counts(bay.auth)).toMatchObject({ mine: 0, mineUnread: 0 });

      // Carl reads his: nothing unread; the contact writes again: unread again.
      await read(carls, carl.auth).expect(200);
      expect(await counts(carl.auth)).toMatchObject({ mine: 1, mineUnread: 0 });
      await inbound('+14155550804', 'still there?', bayKey);
      expect(await counts(carl.auth)).toMatchObject({ mine: 1, mineUnread: 1 });

      // Another agent reading it changes nothing for Carl.
      await read(carls, dana.auth).expect(200);
      expect(await counts(carl.auth)).toMatchObject({ mineUnread: 1 });

      // Reassigned to Dana, who read it all: hers, and read; Carl's no more.
      await t.http.post(`/v1/conversations/${carls}/assign`).set(bay.auth).send({ agentId: dana.agentId }).expect(200);
      expect(await counts(carl.auth)).toMatchObject({ mine: 0, mineUnread: 0 });
      expect(await counts(dana.auth)).toMatchObject({ mine: 2, mineUnread: 1 });
      await read(danas, dana.auth).expect(200);
      expect(await counts(dana.auth)).toMatchObject({ mine: 2, mineUnread: 0 });

      // Back to Carl, whose marker is behind the last message: unread for him.
      await t.http.post(`/v1/conversations/${carls}/assign`).set(bay.auth).send({ agentId: carl.agentId }).expect(200);
      expect(await counts(carl.auth)).toMatchObject({ mine: 1, mineUnread: 1 });

      // Counts are the company's own: Acme's conversations never show in Bay's, nor Bay's in Acme's.
      const acmeCounts = await counts(acme.auth);
      expect(acmeCounts.human).toBe(0);
      expect(acmeCounts.bot).toBeGreaterThan(0);
      expect((await counts(bay.auth)).bot).toBe(2);
    });
  });
});
