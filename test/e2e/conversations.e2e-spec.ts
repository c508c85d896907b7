import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { ContactsService } from '../../src/contacts/contacts.service.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ConversationsRepository } from '../../src/conversations/conversations.repository.js';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import { addAgent, conversationSnapshot, registerCompany, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { EventRecorder } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface ConversationBody {
  id: string;
  contactId: string;
  channel: string;
  status: string;
  priority: string;
  assignedAgentId: string | null;
  assignedAt: string | null;
  assignedBy: { kind: string; id: string | null } | null;
  tags: string[];
  subject: string | null;
  lastMessageAt: string | null;
  firstResponseAt: string | null;
  queuedAt: string | null;
  closedAt: string | null;
  closeReason: string | null;
  createdAt: string;
  updatedAt: string;
}

type Status = 'bot' | 'queued' | 'human' | 'closed';

describe('/v1/conversations', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  async function newContact(company: TestCompany): Promise<string> {
    const contact = await t.app
      .get(ContactsService)
      .findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact'), name: 'Grace' });
    return contact._id.toHexString();
  }

  /** Starts a conversation through the API; the events it caused are not the test's subject, so they are dropped. */
  async function start(company: TestCompany, body: Record<string, unknown> = {}): Promise<ConversationBody> {
    const contactId = (body.contactId as string | undefined) ?? (await newContact(company));
    const response = await t.http
      .post('/v1/conversations')
      .set(company.auth)
      .send({ contactId, ...body })
      .expect(201);
    await recorder.clear();
    return response.body as ConversationBody;
  }

  async function stored(company: TestCompany, id: string) {
    return t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
  }

  async function deactivate(company: TestCompany, agentId: string): Promise<void> {
    await t.app.get(AgentsRepository).updateOne(company.companyId, { _id: agentId }, { isActive: false });
  }

  /** Puts a new conversation of acme in `status` through the API. */
  async function conversationIn(status: Status): Promise<ConversationBody> {
    const conversation = await start(acme);
    const path = `/v1/conversations/${conversation.id}`;
    if (status === 'queued') await t.http.patch(path).set(acme.auth).send({ status: 'queued' }).expect(200);
    if (status === 'human') await t.http.post(`${path}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
    if (status === 'closed') await t.http.post(`${path}/close`).set(acme.auth).send({}).expect(200);
    await recorder.clear();
    return conversation;
  }

  describe('POST /v1/conversations', () => {
    it('starts a conversation in bot with priority medium on the api channel and emits conversation.created once', async () => {
      const contactId = await newContact(acme);
      const response = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId }).expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        contactId,
        channel: 'api',
        status: 'bot',
        priority: 'medium',
        assignedAgentId: null,
        assignedAt: null,
        assignedBy: null,
        tags: [],
        subject: null,
        lastMessageAt: null,
        firstResponseAt: null,
        queuedAt: null,
        closedAt: null,
        closeReason: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        contact: { id: contactId, name: 'Grace', email: expect.stringMatching(/^contact-/), phone: null },
      });
      const record = await stored(acme, response.body.id);
      expect(record).toMatchObject({ status: 'bot', priority: 'medium', isOpen: true, channel: 'api' });
      expect(await recorder.events()).toEqual([
        {
          id: expect.stringMatching(/^evt_/),
          type: 'conversation.created',
          companyId: acme.companyId,
          sequence: expect.any(Number),
          occurredAt: new Date(response.body.createdAt),
          data: { conversation: conversationSnapshot(response.body) },
        },
      ]);
    });

    it('takes channel (lower-cased), subject and priority', async () => {
      const conversation = await start(acme, { channel: 'WhatsApp', subject: 'Order #1042', priority: 'high' });
      expect(conversation).toMatchObject({ channel: 'whatsapp', subject: 'Order #1042', priority: 'high', status: 'bot' });
    });

    it('sends `message` as the first outbound message, after conversation.created', async () => {
      const response = await t.http
        .post('/v1/conversations')
        .set(acme.auth)
        .send({ contactId: await newContact(acme), message: 'Hello Grace, your order has shipped.' })
        .expect(201);
      const conversation = response.body as ConversationBody;
      expect(conversation.lastMessageAt).toEqual(expect.any(String));
      expect(conversation.firstResponseAt).toBe(conversation.lastMessageAt);

      const messages = await t.http.get(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).expect(200);
      expect(messages.body.data).toEqual([
        expect.objectContaining({
          conversationId: conversation.id,
          direction: 'outbound',
          type: 'text',
          text: 'Hello Grace, your order has shipped.',
          senderType: 'agent',
          senderId: acme.agentId,
          createdAt: conversation.lastMessageAt,
        }),
      ]);
      expect((await recorder.events()).map((event) => event.type)).toEqual(['conversation.created', 'message.sent']);
      expect((await recorder.events())[1].data).toEqual({ message: messages.body.data[0], conversation: conversationSnapshot(conversation) });
    });

    it('allows one open conversation per contact and channel: 409, another channel is fine, a new one after closing', async () => {
      const first = await start(acme);
      const second = await t.http
        .post('/v1/conversations')
        .set(acme.auth)
        .send({ contactId: first.contactId, channel: 'API', message: 'not sent' })
        .expect(409);
      expect(second.body.message).toBe(
        `Contact ${first.contactId} already has an open conversation on channel api (${first.id})`,
      );
      const otherChannel = await start(acme, { contactId: first.contactId, channel: 'sms' });
      expect(otherChannel.channel).toBe('sms');

      await t.http.post(`/v1/conversations/${first.id}/close`).set(acme.auth).send({}).expect(200);
      const reopened = await start(acme, { contactId: first.contactId });
      expect(reopened.id).not.toBe(first.id);
      const ofContact = { companyId: acme.companyId, contactId: first.contactId };
      expect(await t.model(Conversation.name).countDocuments(ofContact)).toBe(3);
      const sent = (await recorder.events()).filter((event) => event.type === 'message.sent');
      expect(sent).toEqual([]);
    });

    it('answers 400 for a contact that is not the company’s, unknown or malformed', async () => {
      const foreignContact = await newContact(globex);
      const foreign = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: foreignContact }).expect(400);
      expect(foreign.body.errors).toEqual([{ field: 'contactId', message: 'contact not found' }]);
      await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: '6650f0c2a1b2c3d4e5f60718' }).expect(400);
      const malformed = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: 'nope' }).expect(400);
      expect(malformed.body.errors).toEqual([{ field: 'contactId', message: 'contactId must be a mongodb id' }]);
      expect(await recorder.events()).toEqual([]);
    });

    it('answers 400 for missing, wrongly typed, unknown and operator fields', async () => {
      const contactId = await newContact(acme);
      const cases: Record<string, unknown>[] = [
        {},
        { contactId, priority: 'urgent' },
        { contactId, channel: 'web chat' },
        { contactId, channel: 'x'.repeat(51) },
        { contactId, subject: 42 },
        { contactId, message: '' },
        { contactId, message: 'x'.repeat(4097) },
        { contactId, status: 'human' },
        { contactId: { $gt: '' } },
        { contactId, message: { $ne: null } },
      ];
      for (const body of cases) {
        const response = await t.http.post('/v1/conversations').set(acme.auth).send(body);
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      expect(await t.model(Conversation.name).countDocuments({ companyId: acme.companyId, contactId })).toBe(0);
    });

    it('needs a bearer token', async () => {
      await t.http.post('/v1/conversations').send({ contactId: await newContact(acme) }).expect(401);
    });
  });

  describe('GET /v1/conversations/:id', () => {
    it('answers the conversation', async () => {
      const conversation = await start(acme);
      const response = await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200);
      expect(response.body).toEqual(conversation);
    });

    it('answers 404 for a missing, malformed or foreign id, never the data', async () => {
      const conversation = await start(acme);
      const foreign = await t.http.get(`/v1/conversations/${conversation.id}`).set(globex.auth).expect(404);
      expect(foreign.body).toMatchObject({ status: 404, message: `Conversation ${conversation.id} not found` });
      expect(JSON.stringify(foreign.body)).not.toContain(conversation.contactId);
      await t.http.get('/v1/conversations/6650f0c2a1b2c3d4e5f60718').set(acme.auth).expect(404);
      await t.http.get('/v1/conversations/not-an-id').set(acme.auth).expect(404);
    });
  });

  describe('GET /v1/conversations', () => {
    let initech: TestCompany;
    let agentId: string;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      initech = await registerCompany(t.http, 'Initech');
      agentId = (await addAgent(t, initech, 'agent')).agentId;
      ids.bot = (await start(initech, { priority: 'low' })).id;
      ids.queued = (await start(initech, { priority: 'high' })).id;
      await t.http.patch(`/v1/conversations/${ids.queued}`).set(initech.auth).send({ status: 'queued' }).expect(200);
      ids.human = (await start(initech)).id;
      await t.http.post(`/v1/conversations/${ids.human}/assign`).set(initech.auth).send({ agentId }).expect(200);
      ids.closed = (await start(initech, { priority: 'high' })).id;
      await t.http.post(`/v1/conversations/${ids.closed}/close`).set(initech.auth).send({}).expect(200);
    });

    const list = async (query: Record<string, string | number>) =>
      (await t.http.get('/v1/conversations').query(query).set(initech.auth).expect(200)).body as {
        data: ConversationBody[];
        nextCursor: string | null;
      };

    it('lists the company’s conversations newest first', async () => {
      const page = await list({});
      expect(page.data.map((conversation) => conversation.id)).toEqual([ids.closed, ids.human, ids.queued, ids.bot]);
      expect(page.nextCursor).toBeNull();
    });

    it('filters by status, priority and assigned agent, alone and together', async () => {
      for (const status of ['bot', 'queued', 'human', 'closed']) {
        expect((await list({ status })).data.map((conversation) => conversation.id)).toEqual([ids[status]]);
      }
      expect((await list({ priority: 'high' })).data.map((c) => c.id)).toEqual([ids.closed, ids.queued]);
      expect((await list({ priority: 'high', status: 'queued' })).data.map((c) => c.id)).toEqual([ids.queued]);
      expect((await list({ assignedAgentId: agentId })).data.map((c) => c.id)).toEqual([ids.human]);
      expect((await list({ assignedAgentId: agentId, status: 'bot' })).data).toEqual([]);
      expect((await list({ assignedAgentId: initech.agentId })).data).toEqual([]);
    });

    it('answers 400 for bad filters, limits, cursors and smuggled operators', async () => {
      const bad = [
        'status=open',
        'priority=urgent',
        'assignedAgentId=nope',
        'limit=0',
        'limit=101',
        'limit=ten',
        'startAfter=bm90LWEtY3Vyc29y',
        'status[$ne]=x',
        'assignedAgentId[$gt]=',
        'status=bot&status=human',
        'cursor=abc',
      ];
      for (const query of bad) {
        const response = await t.http.get(`/v1/conversations?${query}`).set(initech.auth);
        expect({ query, status: response.status }).toEqual({ query, status: 400 });
      }
      const malformed = await t.http.get('/v1/conversations?assignedAgentId=nope').set(initech.auth).expect(400);
      expect(malformed.body.errors).toEqual([{ field: 'assignedAgentId', message: 'assignedAgentId must be a mongodb id' }]);
    });

    it('never shows another company’s conversations', async () => {
      const page = await t.http.get('/v1/conversations').set(globex.auth).query({ limit: 100 }).expect(200);
      const shown = new Set(page.body.data.map((conversation: ConversationBody) => conversation.id));
      for (const id of Object.values(ids)) expect(shown.has(id)).toBe(false);
    });

    it('walks pages of 2 to the end while new conversations arrive: no repeats, no gaps', async () => {
      const hooli = await registerCompany(t.http, 'Hooli');
      const existing: string[] = [];
      for (let index = 0; index < 7; index += 1) existing.unshift((await start(hooli)).id);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const response: { body: { data: ConversationBody[]; nextCursor: string | null } } = await t.http
          .get('/v1/conversations')
          .query(cursor ? { limit: 2, startAfter: cursor } : { limit: 2 })
          .set(hooli.auth)
          .expect(200);
        expect(response.body.data.length).toBeLessThanOrEqual(2);
        seen.push(...response.body.data.map((conversation) => conversation.id));
        cursor = response.body.nextCursor;
        pages += 1;
        // Newer conversations arrive meanwhile; they belong before the first page.
        await start(hooli);
      } while (cursor);
      expect(seen).toEqual(existing);
      expect(pages).toBe(4);

      const fresh = await t.http.get('/v1/conversations').query({ limit: 100 }).set(hooli.auth).expect(200);
      expect(fresh.body.data).toHaveLength(11);
      expect(fresh.body.data.slice(4).map((conversation: ConversationBody) => conversation.id)).toEqual(existing);
    });

    it('defaults to 50 per page', async () => {
      const umbrella = await registerCompany(t.http, 'Umbrella');
      for (let index = 0; index < 51; index += 1) await start(umbrella);
      const first = await t.http.get('/v1/conversations').set(umbrella.auth).expect(200);
      expect(first.body.data).toHaveLength(50);
      const second = await t.http
        .get('/v1/conversations')
        .query({ startAfter: first.body.nextCursor })
        .set(umbrella.auth)
        .expect(200);
      expect(second.body.data).toHaveLength(1);
      expect(second.body.nextCursor).toBeNull();
    });
  });

  describe('the embedded contact', () => {
    it('comes with every conversation of a page, read in one contacts query for the page', async () => {
      const hooli = await registerCompany(t.http, 'Hooli');
      const contacts = t.app.get(ContactsService);
      const people = [
        { name: 'Ada', email: uniqueEmail('ada') },
        { name: 'Grace', phone: '+14155552671' },
        { email: uniqueEmail('nameless') },
      ];
      const expected = new Map<string, Record<string, unknown>>();
      for (const person of people) {
        const contact = await contacts.findOrCreateByIdentity(hooli.companyId, person);
        const conversation = await start(hooli, { contactId: contact._id.toHexString() });
        expected.set(conversation.id, {
          id: contact._id.toHexString(),
          name: person.name ?? null,
          email: person.email ?? null,
          phone: person.phone ?? null,
        });
      }
      // The page reads contacts through the driver (TenantRepository.findPlain): count the collection's finds.
      const find = jest.spyOn(t.model('Contact').collection, 'find');
      try {
        const page = await t.http.get('/v1/conversations').set(hooli.auth).expect(200);
        expect(page.body.data).toHaveLength(3);
        for (const conversation of page.body.data) {
          expect(conversation.contact).toEqual(expected.get(conversation.id));
          expect(conversation.contact.id).toBe(conversation.contactId);
        }
        expect(find).toHaveBeenCalledTimes(1);
      } finally {
        find.mockRestore();
      }
    });

    it('comes with GET, assign, close and PATCH answers; null once the contact is deleted', async () => {
      const conversation = await start(acme);
      const path = `/v1/conversations/${conversation.id}`;
      const contact = { id: conversation.contactId, name: 'Grace', email: expect.stringMatching(/^contact-/), phone: null };
      expect((await t.http.get(path).set(acme.auth).expect(200)).body.contact).toEqual(contact);
      expect((await t.http.patch(path).set(acme.auth).send({ priority: 'high' }).expect(200)).body.contact).toEqual(contact);
      const assigned = await t.http.post(`${path}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
      expect(assigned.body.contact).toEqual(contact);

      await t.http.delete(`/v1/contacts/${conversation.contactId}`).set(acme.auth).expect(200);
      const closed = await t.http.post(`${path}/close`).set(acme.auth).send({}).expect(200);
      expect(closed.body).toMatchObject({ contactId: conversation.contactId, contact: null, status: 'closed' });
      // Events and webhooks keep the conversation as they always carried it.
      const events = await recorder.events();
      expect(events.map((event) => event.type)).toEqual(['conversation.assigned', 'conversation.closed']);
      for (const event of events) expect((event.data as { conversation: object }).conversation).not.toHaveProperty('contact');
    });
  });

  describe('POST /v1/conversations/:id/assign', () => {
    it('assigns a bot conversation to an agent: human, assignedAgentId, one conversation.assigned', async () => {
      const conversation = await start(acme);
      const agent = await addAgent(t, acme, 'agent');
      await recorder.clear();
      const response = await t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(acme.auth)
        .send({ agentId: agent.agentId })
        .expect(200);
      expect(response.body).toMatchObject({
        id: conversation.id,
        status: 'human',
        assignedAgentId: agent.agentId,
        assignedAt: expect.any(String),
        assignedBy: { kind: 'agent', id: acme.agentId },
      });
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'human', isOpen: true });
      expect(await recorder.events()).toEqual([
        expect.objectContaining({
          type: 'conversation.assigned',
          companyId: acme.companyId,
          data: { conversation: conversationSnapshot(response.body), agentId: agent.agentId, previousAgentId: null },
        }),
      ]);
    });

    it('reassigns a human conversation (status stays human, event again) and ignores the same agent', async () => {
      const conversation = await start(acme);
      const first = await addAgent(t, acme, 'agent');
      const second = await addAgent(t, acme, 'supervisor');
      const path = `/v1/conversations/${conversation.id}/assign`;
      await t.http.post(path).set(first.auth).send({ agentId: first.agentId }).expect(200);
      await recorder.clear();

      const reassigned = await t.http.post(path).set(first.auth).send({ agentId: second.agentId }).expect(200);
      expect(reassigned.body).toMatchObject({ status: 'human', assignedAgentId: second.agentId });
      expect(reassigned.body.assignedBy).toEqual({ kind: 'agent', id: first.agentId });
      expect(await recorder.events()).toEqual([
        expect.objectContaining({
          type: 'conversation.assigned',
          data: { conversation: conversationSnapshot(reassigned.body), agentId: second.agentId, previousAgentId: first.agentId },
        }),
      ]);

      await recorder.clear();
      const again = await t.http.post(path).set(acme.auth).send({ agentId: second.agentId }).expect(200);
      expect(again.body).toEqual(reassigned.body);
      expect(await recorder.events()).toEqual([]);
    });

    it('answers 400 for an inactive, foreign, unknown or malformed agent, naming the problem', async () => {
      const conversation = await start(acme);
      const path = `/v1/conversations/${conversation.id}/assign`;
      const inactive = await addAgent(t, acme, 'agent');
      await deactivate(acme, inactive.agentId);

      const deactivated = await t.http.post(path).set(acme.auth).send({ agentId: inactive.agentId }).expect(400);
      expect(deactivated.body.errors).toEqual([
        { field: 'agentId', message: 'agent is deactivated and cannot be assigned conversations' },
      ]);
      const foreign = await t.http.post(path).set(acme.auth).send({ agentId: globex.agentId }).expect(400);
      expect(foreign.body.errors).toEqual([{ field: 'agentId', message: 'agent not found' }]);
      await t.http.post(path).set(acme.auth).send({ agentId: '6650f0c2a1b2c3d4e5f60718' }).expect(400);
      const malformed = await t.http.post(path).set(acme.auth).send({ agentId: 'ada' }).expect(400);
      expect(malformed.body.errors).toEqual([{ field: 'agentId', message: 'agentId must be a mongodb id' }]);
      await t.http.post(path).set(acme.auth).send({}).expect(400);
      await t.http.post(path).set(acme.auth).send({ agentId: { $gt: '' } }).expect(400);
      await t.http.post(path).set(acme.auth).send({ agentId: acme.agentId, force: true }).expect(400);

      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'bot', assignedAgentId: null });
      expect(await recorder.events()).toEqual([]);
    });

    it('answers 404 for another company’s conversation and leaves it alone', async () => {
      const conversation = await start(acme);
      await t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(globex.auth)
        .send({ agentId: globex.agentId })
        .expect(404);
      await t.http.post('/v1/conversations/nope/assign').set(acme.auth).send({ agentId: acme.agentId }).expect(404);
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'bot', assignedAgentId: null });
      expect(await recorder.events()).toEqual([]);
    });
  });

  describe('POST /v1/conversations/:id/close', () => {
    it('closes with a reason and emits conversation.closed once', async () => {
      const conversation = await start(acme);
      const response = await t.http
        .post(`/v1/conversations/${conversation.id}/close`)
        .set(acme.auth)
        .send({ reason: 'Resolved: refund issued' })
        .expect(200);
      expect(response.body).toMatchObject({
        status: 'closed',
        closedAt: expect.any(String),
        closeReason: 'Resolved: refund issued',
      });
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'closed', isOpen: false });
      expect(await recorder.events()).toEqual([
        expect.objectContaining({
          type: 'conversation.closed',
          companyId: acme.companyId,
          data: { conversation: conversationSnapshot(response.body), reason: 'Resolved: refund issued' },
        }),
      ]);
    });

    it('closes without a body, keeping the agent it had', async () => {
      const conversation = await conversationIn('human');
      const response = await t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).expect(200);
      expect(response.body).toMatchObject({ status: 'closed', closeReason: null, assignedAgentId: acme.agentId });
      expect((await recorder.events()).map((event) => event.type)).toEqual(['conversation.closed']);
      expect((await recorder.events())[0].data).toEqual({ conversation: conversationSnapshot(response.body), reason: null });
    });

    it('never reopens: a second close is a 400 naming the rule', async () => {
      const conversation = await conversationIn('closed');
      const response = await t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({}).expect(400);
      expect(response.body.message).toBe(
        "Cannot move a conversation from closed to closed; allowed from closed: none (closed conversations are never reopened)",
      );
      expect(await recorder.events()).toEqual([]);
    });

    it('answers 400 for a bad reason and 404 for a foreign conversation', async () => {
      const conversation = await start(acme);
      const path = `/v1/conversations/${conversation.id}/close`;
      await t.http.post(path).set(acme.auth).send({ reason: '' }).expect(400);
      await t.http.post(path).set(acme.auth).send({ reason: 7 }).expect(400);
      await t.http.post(path).set(acme.auth).send({ reason: { $ne: null } }).expect(400);
      await t.http.post(path).set(acme.auth).send({ reason: 'x'.repeat(501) }).expect(400);
      await t.http.post(path).set(globex.auth).send({}).expect(404);
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'bot', isOpen: true, closedAt: null });
      expect(await recorder.events()).toEqual([]);
    });
  });

  describe('PATCH /v1/conversations/:id', () => {
    it('changes priority, tags (trimmed, without blanks or duplicates) and subject; null clears the subject', async () => {
      const conversation = await start(acme, { subject: 'Old subject' });
      const path = `/v1/conversations/${conversation.id}`;
      const response = await t.http
        .patch(path)
        .set(acme.auth)
        .send({ priority: 'high', tags: [' vip', 'billing', 'vip', ''], subject: 'Refund' })
        .expect(200);
      expect(response.body).toMatchObject({ priority: 'high', tags: ['vip', 'billing'], subject: 'Refund', status: 'bot' });
      const cleared = await t.http.patch(path).set(acme.auth).send({ subject: null, tags: [] }).expect(200);
      expect(cleared.body).toMatchObject({ subject: null, tags: [], priority: 'high' });
      expect(await stored(acme, conversation.id)).toMatchObject({ subject: null, tags: [], priority: 'high' });
      const unchanged = await t.http.patch(path).set(acme.auth).send({}).expect(200);
      expect(unchanged.body).toEqual(cleared.body);
      expect(await recorder.events()).toEqual([]);
    });

    it('hands a bot conversation off to the queue, setting queuedAt, with conversation.queued once', async () => {
      const conversation = await start(acme);
      const response = await t.http
        .patch(`/v1/conversations/${conversation.id}`)
        .set(acme.auth)
        .send({ status: 'queued' })
        .expect(200);
      expect(response.body).toMatchObject({ status: 'queued', queuedAt: expect.any(String), assignedAgentId: null });
      expect(await recorder.events()).toEqual([
        {
          id: expect.stringMatching(/^evt_/),
          type: 'conversation.queued',
          companyId: acme.companyId,
          sequence: expect.any(Number),
          occurredAt: new Date(response.body.updatedAt),
          data: { conversation: conversationSnapshot(response.body), previousAgentId: null },
        },
      ]);
    });

    it('unassigns a human conversation back to the queue', async () => {
      const conversation = await conversationIn('human');
      const response = await t.http
        .patch(`/v1/conversations/${conversation.id}`)
        .set(acme.auth)
        .send({ status: 'queued', priority: 'high' })
        .expect(200);
      expect(response.body).toMatchObject({
        status: 'queued',
        priority: 'high',
        assignedAgentId: null,
        assignedAt: null,
        assignedBy: null,
        queuedAt: expect.any(String),
      });
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'queued', assignedAgentId: null });
      const [event] = await recorder.events();
      expect(event).toMatchObject({ type: 'conversation.queued', data: { conversation: conversationSnapshot(response.body), previousAgentId: expect.any(String) } });
    });

    it('labels a closed conversation but does not move it', async () => {
      const conversation = await conversationIn('closed');
      const path = `/v1/conversations/${conversation.id}`;
      const labelled = await t.http.patch(path).set(acme.auth).send({ tags: ['churn-risk'] }).expect(200);
      expect(labelled.body).toMatchObject({ status: 'closed', tags: ['churn-risk'] });
      const moved = await t.http.patch(path).set(acme.auth).send({ status: 'queued', priority: 'low' }).expect(400);
      expect(moved.body.message).toBe(
        'Cannot move a conversation from closed to queued; allowed from closed: none (closed conversations are never reopened)',
      );
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'closed', priority: 'medium' });
    });

    it('accepts status only as queued', async () => {
      const conversation = await start(acme);
      for (const status of ['human', 'closed', 'bot', 'open', null]) {
        const response = await t.http.patch(`/v1/conversations/${conversation.id}`).set(acme.auth).send({ status });
        expect({ status, code: response.status }).toEqual({ status, code: 400 });
        expect(response.body.errors).toEqual([
          { field: 'status', message: 'status may only be set to queued here; assign or close through their own routes' },
        ]);
      }
    });

    it('answers 400 for wrong types, unknown fields and operators; 404 for foreign or malformed ids', async () => {
      const conversation = await start(acme);
      const path = `/v1/conversations/${conversation.id}`;
      const cases: Record<string, unknown>[] = [
        { priority: 'urgent' },
        { priority: null },
        { tags: 'vip' },
        { tags: null },
        { tags: ['t'.repeat(51)] },
        { tags: [42] },
        { tags: Array.from({ length: 51 }, (_, index) => `t${index}`) },
        { subject: '' },
        { assignedAgentId: acme.agentId },
        { tags: { $each: ['vip'] } },
        { $set: { status: 'closed' } },
      ];
      for (const body of cases) {
        const response = await t.http.patch(path).set(acme.auth).send(body);
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
      }
      await t.http.patch(path).set(globex.auth).send({ priority: 'high' }).expect(404);
      await t.http.patch('/v1/conversations/zzz').set(acme.auth).send({ priority: 'high' }).expect(404);
      expect(await stored(acme, conversation.id)).toMatchObject({ priority: 'medium', tags: [], status: 'bot' });
    });
  });

  describe('every transition through the API', () => {
    const moves = {
      queued: (id: string) => t.http.patch(`/v1/conversations/${id}`).set(acme.auth).send({ status: 'queued' }),
      human: (id: string) => t.http.post(`/v1/conversations/${id}/assign`).set(acme.auth).send({ agentId: acme.agentId }),
      closed: (id: string) => t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}),
    };
    // human → human is a reassignment: it is tried with another agent below.
    const table: [Status, keyof typeof moves, boolean][] = [
      ['bot', 'queued', true],
      ['bot', 'human', true],
      ['bot', 'closed', true],
      ['queued', 'queued', false],
      ['queued', 'human', true],
      ['queued', 'closed', true],
      ['human', 'queued', true],
      ['human', 'closed', true],
      ['closed', 'queued', false],
      ['closed', 'human', false],
      ['closed', 'closed', false],
    ];

    it.each(table)('%s → %s allowed: %s', async (from, to, allowed) => {
      const conversation = await conversationIn(from);
      const response = await moves[to](conversation.id);
      expect(response.status).toBe(allowed ? 200 : 400);
      const record = await stored(acme, conversation.id);
      expect(record?.status).toBe(allowed ? to : from);
      if (!allowed) expect(response.body.message).toMatch(new RegExp(`^Cannot move a conversation from ${from} to ${to}; allowed from ${from}: `));
    });

    it('human → human with another agent is a reassignment', async () => {
      const conversation = await conversationIn('human');
      const other = await addAgent(t, acme, 'agent');
      const response = await t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(acme.auth)
        .send({ agentId: other.agentId })
        .expect(200);
      expect(response.body).toMatchObject({ status: 'human', assignedAgentId: other.agentId });
    });
  });

  describe('concurrent changes', () => {
    afterEach(() => {
      jest.restoreAllMocks();
    });

    it('applies a status change only to the status it was checked against: the loser answers 409', async () => {
      const conversation = await start(acme);
      const repository = t.app.get(ConversationsRepository);
      const change = repository.change.bind(repository);
      // Another request closes the conversation between this request's read and its write.
      jest.spyOn(repository, 'change').mockImplementationOnce(async (...args) => {
        await t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({}).expect(200);
        return change(...args);
      });
      const response = await t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(acme.auth)
        .send({ agentId: acme.agentId })
        .expect(409);
      expect(response.body.message).toBe(
        `Conversation ${conversation.id} was changed by another request (it is now closed); read it again and retry`,
      );
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'closed', assignedAgentId: null });
      expect((await recorder.events()).map((event) => event.type)).toEqual(['conversation.closed']);
    });

    it('computes a change again when only fields it does not rely on moved, so its event shows the record as stored', async () => {
      const conversation = await start(acme);
      const repository = t.app.get(ConversationsRepository);
      const change = repository.change.bind(repository);
      // A reply lands (lastMessageAt, firstResponseAt) between this request's read and its write.
      const spy = jest.spyOn(repository, 'change').mockImplementationOnce(async (...args) => {
        await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).send({ text: 'One moment' }).expect(201);
        return change(...args);
      });
      const response = await t.http.post(`/v1/conversations/${conversation.id}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
      expect(response.body).toMatchObject({ status: 'human', lastMessageAt: expect.any(String), firstResponseAt: expect.any(String) });
      const assigned = (await recorder.events()).filter((event) => event.type === 'conversation.assigned');
      expect(assigned).toHaveLength(1);
      expect(assigned[0].data).toMatchObject({ conversation: conversationSnapshot(response.body) });
      // The first write missed the revision the reply made; the second, computed again, applied.
      expect(spy).toHaveBeenCalledTimes(2);
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'human', revision: 2 });
    });

    it('of concurrent closes exactly one applies and emits', async () => {
      const conversation = await start(acme);
      await recorder.clear();
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({})),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      for (const status of statuses.filter((code) => code !== 200)) expect([400, 409]).toContain(status);
      expect((await recorder.events()).filter((event) => event.type === 'conversation.closed')).toHaveLength(1);
    });
  });

  describe('ConversationsService for other modules', () => {
    it('requeueAgentConversations moves the agent’s open human conversations back to the queue', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const other = await addAgent(t, acme, 'agent');
      const assign = (id: string, agentId: string) =>
        t.http.post(`/v1/conversations/${id}/assign`).set(acme.auth).send({ agentId }).expect(200);
      const mine = [await start(acme), await start(acme)];
      for (const conversation of mine) await assign(conversation.id, agent.agentId);
      const closed = await start(acme);
      await assign(closed.id, agent.agentId);
      await t.http.post(`/v1/conversations/${closed.id}/close`).set(acme.auth).send({}).expect(200);
      const theirs = await start(acme);
      await assign(theirs.id, other.agentId);

      await recorder.clear();
      const moved = await t.app.get(ConversationsService).requeueAgentConversations(acme.companyId, agent.agentId);
      expect(moved).toBe(2);
      const queued = await recorder.events();
      expect(queued.map((event) => event.type)).toEqual(['conversation.queued', 'conversation.queued']);
      expect(queued.map((event) => (event as DomainEvent<'conversation.queued'>).data.conversation.id)).toEqual(mine.map((conversation) => conversation.id));
      expect(queued.map((event) => (event as DomainEvent<'conversation.queued'>).data)).toEqual(
        mine.map(() => ({ conversation: expect.objectContaining({ status: 'queued' }), previousAgentId: agent.agentId })),
      );
      for (const conversation of mine) {
        expect(await stored(acme, conversation.id)).toMatchObject({
          status: 'queued',
          assignedAgentId: null,
          queuedAt: expect.any(Date),
        });
      }
      expect(await stored(acme, closed.id)).toMatchObject({ status: 'closed' });
      expect(await stored(acme, theirs.id)).toMatchObject({ status: 'human' });
      expect(await t.app.get(ConversationsService).requeueAgentConversations(globex.companyId, other.agentId)).toBe(0);
      expect(await stored(acme, theirs.id)).toMatchObject({ status: 'human' });
    });

    it('assign by a flow, setPriority, addTags and handOff', async () => {
      const service = t.app.get(ConversationsService);
      const conversation = await start(acme);
      await service.setPriority(acme.companyId, conversation.id, 'low');
      await service.addTags(acme.companyId, conversation.id, ['a', 'b']);
      const tagged = await service.addTags(acme.companyId, conversation.id, ['b', 'c']);
      expect(tagged).toMatchObject({ priority: 'low', tags: ['a', 'b', 'c'] });
      const queued = await service.handOff(acme.companyId, conversation.id);
      expect(queued.status).toBe('queued');
      const flowId = '6650f0c2a1b2c3d4e5f60799';
      const assigned = await service.assign(acme.companyId, conversation.id, acme.agentId, { kind: 'flow', id: flowId });
      expect(assigned).toMatchObject({ status: 'human', assignedBy: { kind: 'flow', id: flowId } });
      await expect(service.addTags(globex.companyId, conversation.id, ['x'])).rejects.toThrow('not found');
    });
  });

  it('documents every conversation route with its body and errors', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const assign = document.paths['/v1/conversations/{id}/assign'].post;
    expect(assign.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/AssignConversationDto');
    expect(Object.keys(assign.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '409', '429']));
    const create = document.paths['/v1/conversations'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateConversationDto');
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '409', '429']));
    const list = document.paths['/v1/conversations'].get;
    expect(list.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(
      ['assignedAgentId', 'limit', 'priority', 'startAfter', 'status'],
    );
    expect(document.paths['/v1/conversations/{id}'].patch.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/UpdateConversationDto',
    );
  });
});
