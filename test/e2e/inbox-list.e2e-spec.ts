import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { DataMigration } from '../../src/database/migrations/data-migration.schema.js';
import { InboxBackfill } from '../../src/inbox/inbox-backfill.js';
import { Message } from '../../src/messages/message.schema.js';
import type { AgentConversationView } from '../../src/inbox/agent-conversation.view.js';
import * as samples from '../fixtures/media/samples.js';
import { EventRecorder } from '../support/event-log.js';
import { addAgent, createApiKey, registerCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

type Page = { data: AgentConversationView[]; nextCursor: string | null };

/** Lets the clock move on, so that times written one after another differ. */
const tick = () => new Promise((resolve) => setTimeout(resolve, 3));

describe('GET /v1/conversations: the inbox’s filters, orders and walks', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
  });
  afterAll(() => t.close());

  /** A company with an API key for inbound messages, and helpers bound to it. */
  async function company(name: string) {
    const c = await registerCompany(t.http, name);
    const apiKey = await createApiKey(t.http, c, ['messages:write']);
    const inbound = async (phone: string, text: string, channel = 'whatsapp') => {
      await tick();
      const { body } = await t.http.post('/api/external/messages').set('x-api-key', apiKey).send({ from: { phone }, text, channel }).expect(201);
      return body.data.conversation.id as string;
    };
    const reply = async (id: string, text: string) => {
      await tick();
      await t.http.post(`/v1/conversations/${id}/messages`).set(c.auth).send({ text }).expect(201);
    };
    const list = async (query: Record<string, string | number>, auth = c.auth) => (await t.http.get('/v1/conversations').query(query).set(auth).expect(200)).body as Page;
    const ids = async (query: Record<string, string | number>) => (await list({ limit: 100, ...query })).data.map((conversation) => conversation.id);
    /** Every page of a walk with `limit`, checking each page's size. */
    const walk = async (query: Record<string, string | number>, limit: number, between: (page: number) => Promise<void> = async () => {}) => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: Page = await list({ ...query, limit, ...(cursor ? { startAfter: cursor } : {}) });
        expect(page.data.length).toBeLessThanOrEqual(limit);
        seen.push(...page.data.map((conversation) => conversation.id));
        cursor = page.nextCursor;
        await between(++pages);
      } while (cursor);
      return seen;
    };
    return { ...c, apiKey, inbound, reply, list, ids, walk };
  }

  describe('filters', () => {
    let acme: Awaited<ReturnType<typeof company>>;
    let agentId: string;
    const c: Record<string, string> = {};
    let contactX: string;
    let afterSecond: string;

    beforeAll(async () => {
      acme = await company('Filters');
      agentId = (await addAgent(t, acme, 'agent')).agentId;
      c.bot = await acme.inbound('+14155550001', 'hello');
      await t.http.patch(`/v1/conversations/${c.bot}`).set(acme.auth).send({ tags: ['vip', 'billing'] }).expect(200);
      c.queued = await acme.inbound('+14155550002', 'help', 'SMS');
      await t.http.patch(`/v1/conversations/${c.queued}`).set(acme.auth).send({ status: 'queued', tags: ['vip'] }).expect(200);
      await tick();
      afterSecond = new Date().toISOString();
      c.human = await acme.inbound('+14155550003', 'hi');
      await t.http.post(`/v1/conversations/${c.human}/assign`).set(acme.auth).send({ agentId }).expect(200);
      c.closed = await acme.inbound('+14155550004', 'bye');
      await t.http.post(`/v1/conversations/${c.closed}/close`).set(acme.auth).send({}).expect(200);
      c.sameContact = await acme.inbound('+14155550001', 'me again', 'sms');
      contactX = (await acme.list({ limit: 1 })).data[0].contactId;
      // Snoozing is another feature's route; the list filters on the field it sets.
      await t.model<Conversation>(Conversation.name).collection.updateOne({ _id: new Types.ObjectId(c.queued) }, { $set: { snoozedUntil: new Date(Date.now() + 3_600_000) } });
    });

    it('takes one status or several, and combines filters', async () => {
      expect(await acme.ids({ status: 'queued,human' })).toEqual([c.human, c.queued]);
      expect(await acme.ids({ status: 'human,queued,human' })).toEqual([c.human, c.queued]);
      expect(await acme.ids({ status: 'bot' })).toEqual([c.sameContact, c.bot]);
      expect(await acme.ids({ status: ['bot', 'closed'] as never })).toEqual([c.sameContact, c.closed, c.bot]);
      expect(await acme.ids({ status: 'bot,queued', channel: 'sms' })).toEqual([c.sameContact, c.queued]);
    });

    it('filters by assignment, contact, channel, tags, creation time and snooze', async () => {
      expect(await acme.ids({ unassigned: 'true' })).toEqual([c.sameContact, c.closed, c.queued, c.bot]);
      expect(await acme.ids({ unassigned: 'false' })).toEqual([c.human]);
      expect(await acme.ids({ unassigned: 'true', status: 'bot,queued,human' })).toEqual([c.sameContact, c.queued, c.bot]);
      expect(await acme.ids({ contactId: contactX })).toEqual([c.sameContact, c.bot]);
      expect(await acme.ids({ channel: 'SMS' })).toEqual([c.sameContact, c.queued]);
      expect(await acme.ids({ tags: 'vip,billing' })).toEqual([c.bot]);
      expect(await acme.ids({ tags: 'vip' })).toEqual([c.queued, c.bot]);
      expect(await acme.ids({ createdAfter: afterSecond })).toEqual([c.sameContact, c.closed, c.human]);
      expect(await acme.ids({ createdBefore: afterSecond })).toEqual([c.queued, c.bot]);
      expect(await acme.ids({ createdAfter: '2000-01-01', createdBefore: afterSecond, tags: 'billing' })).toEqual([c.bot]);
      expect(await acme.ids({ snoozed: 'true' })).toEqual([c.queued]);
      expect(await acme.ids({ snoozed: 'false', status: 'queued,bot' })).toEqual([c.sameContact, c.bot]);
    });

    it('another company’s contact or agent matches nothing: an empty page, not 404', async () => {
      const globex = await company('Globex filters');
      const theirs = await globex.inbound('+14155550001', 'hello');
      const contactOfGlobex = (await globex.list({})).data[0].contactId;
      expect(await acme.list({ contactId: contactOfGlobex })).toEqual({ data: [], nextCursor: null });
      expect(await acme.list({ assignedAgentId: globex.agentId })).toEqual({ data: [], nextCursor: null });
      expect(await globex.ids({})).toEqual([theirs]);
    });

    it('answers 400 naming the field for bad input, storing nothing', async () => {
      const cases: [Record<string, string>, string][] = [
        [{ sort: 'oldest' }, 'sort'],
        [{ status: 'open' }, 'status'],
        [{ createdAfter: 'yesterday' }, 'createdAfter'],
        [{ createdBefore: '2024-02-30' }, 'createdBefore'],
        [{ contactId: 'nope' }, 'contactId'],
        [{ unassigned: 'maybe' }, 'unassigned'],
        [{ snoozed: 'yes' }, 'snoozed'],
        [{ channel: '' }, 'channel'],
        [{ unassigned: 'true', assignedAgentId: agentId }, 'unassigned'],
        [{ createdAfter: '2024-05-02', createdBefore: '2024-05-01' }, 'createdBefore'],
        [{ startAfter: Buffer.from('c2.x.1.abc').toString('base64url') }, 'startAfter'],
      ];
      for (const [query, field] of cases) {
        const response = await t.http.get('/v1/conversations').query(query).set(acme.auth);
        expect({ query, status: response.status, type: response.headers['content-type'] }).toEqual({ query, status: 400, type: expect.stringContaining('application/problem+json') });
        expect(response.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      }
    });
  });

  describe('orders, and walks that never repeat nor skip while nothing changes', () => {
    let acme: Awaited<ReturnType<typeof company>>;
    const n: string[] = [];

    beforeAll(async () => {
      acme = await company('Orders');
      for (let i = 0; i < 7; i++) n.push(await acme.inbound(`+1415555010${i}`, `first ${i}`));
      // Activity in another order than creation: 5, then 1, then 3 write again.
      await acme.inbound('+14155550105', 'later');
      await acme.reply(n[1], 'an answer');
      await acme.inbound('+14155550103', 'latest');
      // Queue 4, then 0, then 6 (3 and the others never queued).
      for (const i of [4, 0, 6]) {
        await tick();
        await t.http.patch(`/v1/conversations/${n[i]}`).set(acme.auth).send({ status: 'queued' }).expect(200);
      }
    });

    it('created: newest created first (the default)', async () => {
      expect(await acme.ids({})).toEqual([...n].reverse());
      expect(await acme.ids({ sort: 'created' })).toEqual([...n].reverse());
    });

    it('lastActivity: most recent message first, whoever wrote it', async () => {
      expect(await acme.ids({ sort: 'lastActivity' })).toEqual([n[3], n[1], n[5], n[6], n[4], n[2], n[0]]);
      const [first] = (await acme.list({ sort: 'lastActivity', limit: 1 })).data;
      expect(first.lastMessage).toMatchObject({ direction: 'inbound', senderType: 'contact', type: 'text', preview: 'latest' });
      expect(first.lastMessageAt).toBe(first.lastMessage!.createdAt);
    });

    it('waiting: longest queued first, then the conversations never queued, oldest first', async () => {
      expect(await acme.ids({ sort: 'waiting' })).toEqual([n[4], n[0], n[6], n[1], n[2], n[3], n[5]]);
      expect(await acme.ids({ sort: 'waiting', status: 'queued' })).toEqual([n[4], n[0], n[6]]);
    });

    it('walks every order to its end in pages of 1, 2 and 3 with the same result', async () => {
      for (const sort of ['created', 'lastActivity', 'waiting']) {
        const all = await acme.ids({ sort });
        for (const limit of [1, 2, 3]) expect({ sort, limit, walked: await acme.walk({ sort }, limit) }).toEqual({ sort, limit, walked: all });
        expect(await acme.walk({ sort, status: 'bot,queued' }, 2)).toEqual(await acme.ids({ sort, status: 'bot,queued' }));
      }
    });

    it('a cursor continues only the order it was made in; the first version’s cursors continue created', async () => {
      const { nextCursor } = await acme.list({ sort: 'lastActivity', limit: 2 });
      const refused = await t.http.get('/v1/conversations').query({ sort: 'created', startAfter: nextCursor! }).set(acme.auth).expect(400);
      expect(refused.body.errors).toEqual([{ field: 'startAfter', message: 'startAfter continues a walk by lastActivity: send sort=lastActivity with it, or start again without it' }]);
      const legacy = Buffer.from(`c1.${n[4]}`).toString('base64url');
      expect((await acme.list({ startAfter: legacy, limit: 100 })).data.map((c) => c.id)).toEqual([n[3], n[2], n[1], n[0]]);
    });
  });

  describe('walks while conversations receive messages (docs/inbox.md)', () => {
    it('lastActivity: a conversation with new activity moves ahead of the walk, never shown twice in it', async () => {
      const acme = await company('Activity walk');
      const phones = Array.from({ length: 6 }, (_, i) => `+1415555020${i}`);
      const ids: string[] = [];
      for (const phone of phones) ids.push(await acme.inbound(phone, 'hello'));
      const before = [...ids].reverse();
      expect(await acme.ids({ sort: 'lastActivity' })).toEqual(before);

      const walked = await acme.walk({ sort: 'lastActivity' }, 2, async (page) => {
        if (page !== 1) return;
        await acme.inbound(phones[5], 'shown already, writes again');
        await acme.inbound(phones[1], 'not reached yet, writes');
      });
      // The first page showed 5 and 4; 5 is not repeated, and 1 (moved ahead) is not shown in this walk.
      expect(walked).toEqual([ids[5], ids[4], ids[3], ids[2], ids[0]]);
      expect(new Set(walked).size).toBe(walked.length);
      // A fresh first page shows them first, newest activity first.
      expect((await acme.ids({ sort: 'lastActivity' })).slice(0, 2)).toEqual([ids[1], ids[5]]);
    });

    it('waiting: a conversation that re-enters the queue moves behind the walk, which shows it again', async () => {
      const acme = await company('Waiting walk');
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        ids.push(await acme.inbound(`+1415555030${i}`, 'hello'));
        await t.http.patch(`/v1/conversations/${ids[i]}`).set(acme.auth).send({ status: 'queued' }).expect(200);
      }
      const walked = await acme.walk({ sort: 'waiting', status: 'queued' }, 2, async (page) => {
        if (page !== 1) return;
        await t.http.post(`/v1/conversations/${ids[0]}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
        await tick();
        await t.http.patch(`/v1/conversations/${ids[0]}`).set(acme.auth).send({ status: 'queued' }).expect(200);
      });
      expect(walked).toEqual([ids[0], ids[1], ids[2], ids[3], ids[0]]);
    });

    it('created: new conversations land before the walk, which neither repeats nor skips', async () => {
      const acme = await company('Created walk');
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await acme.inbound(`+1415555040${i}`, 'hello'));
      let next = 10;
      const walked = await acme.walk({}, 2, async () => {
        await acme.inbound(`+1415555${String(next++).padStart(4, '0')}`, 'new');
        await acme.inbound(`+1415555040${next % 5}`, 'activity');
      });
      expect(walked).toEqual([...ids].reverse());
    });
  });

  describe('lastMessage', () => {
    it('previews the newest message: 160 characters of its text, its type for media without caption; events carry it, never a reader’s fields', async () => {
      const acme = await company('Previews');
      const recorder = new EventRecorder(t);
      const long = `${'é'.repeat(100)}${'🎉'.repeat(100)}`;
      const id = await acme.inbound('+14155550501', long);
      const [row] = (await acme.list({})).data;
      expect(row.lastMessage!.preview).toBe(`${'é'.repeat(100)}${'🎉'.repeat(60)}`);
      expect(row).toMatchObject({ unreadCount: 1, lastReadAt: null });

      await recorder.clear();
      const media = await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .field('conversationId', id)
        .field('type', 'image')
        .attach('file', samples.png(), 'dot.png')
        .expect(201);
      const [after] = (await acme.list({})).data;
      expect(after.lastMessage).toEqual({ id: media.body.id, direction: 'outbound', senderType: 'agent', type: 'image', preview: '[image]', createdAt: media.body.createdAt });
      const [sent] = await recorder.events();
      expect(sent.type).toBe('message.sent');
      const conversation = (sent.data as unknown as { conversation: Record<string, unknown> }).conversation;
      expect(conversation.lastMessage).toEqual(after.lastMessage);
      expect(conversation).not.toHaveProperty('unreadCount');
      expect(conversation).not.toHaveProperty('lastReadAt');
      // A stored event's media has no signed link either.
      expect((sent.data as unknown as { message: { media: Record<string, unknown> } }).message.media).not.toHaveProperty('downloadUrl');
    });

    it('conversations stored before the inbox existed get its fields once, at start-up', async () => {
      const acme = await company('Older data');
      const companyId = new Types.ObjectId(acme.companyId);
      const conversations = t.model<Conversation>(Conversation.name).collection;
      const messages = t.model<Message>(Message.name).collection;
      const at = (minutes: number) => new Date(Date.UTC(2024, 4, 1, 10, minutes));
      const old = { companyId, contactId: new Types.ObjectId(), channel: 'whatsapp', status: 'bot', priority: 'medium', assignedAgentId: null, tags: [], isOpen: true, updatedAt: at(9) };
      const talked = new Types.ObjectId();
      const silent = new Types.ObjectId();
      await conversations.insertMany([
        { _id: talked, ...old, lastMessageAt: at(9), createdAt: at(0) },
        { _id: silent, ...old, contactId: new Types.ObjectId(), lastMessageAt: null, createdAt: at(1) },
      ] as never[]);
      const message = (minutes: number, direction: string, text: string) =>
        ({ _id: new Types.ObjectId(), companyId, conversationId: talked, direction, type: 'text', text, caption: null, media: null, senderType: direction === 'inbound' ? 'contact' : 'agent', createdAt: at(minutes), updatedAt: at(minutes) }) as never;
      const last = message(9, 'outbound', 'On its way');
      await messages.insertMany([message(2, 'inbound', 'Hi'), message(5, 'inbound', 'Where is it?'), last]);

      await t.model<DataMigration>(DataMigration.name).collection.deleteOne({ _id: 'conversations.inbox' } as never);
      await t.app.get(InboxBackfill).onApplicationBootstrap();

      expect(await conversations.findOne({ _id: talked })).toMatchObject({
        lastActivityAt: at(9),
        inboundCount: 2,
        assigneeUnread: true,
        lastMessage: { id: (last as { _id: Types.ObjectId })._id, direction: 'outbound', senderType: 'agent', type: 'text', preview: 'On its way', createdAt: at(9) },
      });
      expect(await conversations.findOne({ _id: silent })).toMatchObject({ lastActivityAt: at(1), inboundCount: 0, lastMessage: null });
      const [row] = (await acme.list({ sort: 'lastActivity', limit: 1 })).data;
      expect(row).toMatchObject({ id: talked.toHexString(), unreadCount: 2, lastMessage: { preview: 'On its way' } });
    });

    it('is null before the first message', async () => {
      const acme = await company('No messages');
      const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Quiet', phone: '+14155550601' }).expect(201);
      const started = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id }).expect(201);
      expect(started.body).toMatchObject({ lastMessage: null, lastMessageAt: null, unreadCount: 0, lastReadAt: null });
      expect(await t.model<Conversation>(Conversation.name).collection.findOne({ _id: new Types.ObjectId(started.body.id as string) })).toMatchObject({
        lastActivityAt: new Date(started.body.createdAt as string),
        inboundCount: 0,
      });
    });
  });
});
