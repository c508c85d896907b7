import { describe, expect, it, jest } from '@jest/globals';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { asSnapshot, conversationsSuite } from '../support/conversations.js';
import { registerCompany, uniqueEmail } from '../support/factories.js';
import { loggedEvent } from '../support/event-log.js';

describe('/v1/conversations: start, read, the embedded contact', () => {
  const suite = conversationsSuite();
  const { newContact, start, stored } = suite;

  describe('POST /v1/conversations', () => {
    it('starts a conversation in bot with priority medium on the api channel and emits conversation.created once', async () => {
      const contactId = await newContact(suite.acme);
      const response = await suite.t.http.post('/v1/conversations').set(suite.acme.auth).send({ contactId }).expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        contactId,
        originalContactId: null,
        channel: 'api',
        status: 'bot',
        priority: 'medium',
        assignedAgentId: null,
        assignedAt: null,
        assignedBy: null,
        tags: [],
        attributes: {},
        teamId: null,
        requiredSkills: [],
        subject: null,
        lastMessageAt: null,
        lastMessage: null,
        firstResponseAt: null,
        queuedAt: null,
        closedAt: null,
        closeReason: null,
        snoozedUntil: null,
        replyWindowExpiresAt: null,
        sla: null,
        csat: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        contact: { id: contactId, name: 'Grace', email: expect.stringMatching(/^contact-/), phone: null },
        unreadCount: 0,
        lastReadAt: null,
      });
      const record = await stored(suite.acme, response.body.id);
      expect(record).toMatchObject({ status: 'bot', priority: 'medium', isOpen: true, channel: 'api' });
      expect(await suite.recorder.events()).toEqual([
        loggedEvent('conversation.created', suite.acme.companyId, new Date(response.body.createdAt), { conversation: asSnapshot(response.body) }),
      ]);
    });

    it('takes channel (lower-cased), subject and priority', async () => {
      const conversation = await start(suite.acme, { channel: 'WhatsApp', subject: 'Order #1042', priority: 'high' });
      expect(conversation).toMatchObject({ channel: 'whatsapp', subject: 'Order #1042', priority: 'high', status: 'bot' });
    });

    it('sends `message` as the first outbound message, after conversation.created', async () => {
      const response = await suite.t.http
        .post('/v1/conversations')
        .set(suite.acme.auth)
        .send({ contactId: await newContact(suite.acme), message: 'Hello Grace, your order has shipped.' })
        .expect(201);
      const conversation = response.body as ConversationView;
      expect(conversation.lastMessageAt).toEqual(expect.any(String));
      expect(conversation.firstResponseAt).toBe(conversation.lastMessageAt);

      const messages = await suite.t.http.get(`/v1/conversations/${conversation.id}/messages`).set(suite.acme.auth).expect(200);
      expect(messages.body.data).toEqual([
        expect.objectContaining({
          conversationId: conversation.id,
          direction: 'outbound',
          type: 'text',
          text: 'Hello Grace, your order has shipped.',
          senderType: 'agent',
          senderId: suite.acme.agentId,
          createdAt: conversation.lastMessageAt,
        }),
      ]);
      expect((await suite.recorder.events()).map((event) => event.type)).toEqual(['conversation.created', 'message.sent']);
      expect((await suite.recorder.events())[1].data).toEqual({ message: messages.body.data[0], conversation: asSnapshot(conversation) });
    });

    it('allows one open conversation per contact and channel: 409, another channel is fine, a new one after closing', async () => {
      const first = await start(suite.acme);
      const second = await suite.t.http
        .post('/v1/conversations')
        .set(suite.acme.auth)
        .send({ contactId: first.contactId, channel: 'API', message: 'not sent' })
        .expect(409);
      expect(second.body.message).toBe(
        `Contact ${first.contactId} already has an open conversation on channel api (${first.id})`,
      );
      const otherChannel = await start(suite.acme, { contactId: first.contactId, channel: 'sms' });
      expect(otherChannel.channel).toBe('sms');

      await suite.t.http.post(`/v1/conversations/${first.id}/close`).set(suite.acme.auth).send({}).expect(200);
      const reopened = await start(suite.acme, { contactId: first.contactId });
      expect(reopened.id).not.toBe(first.id);
      const ofContact = { companyId: suite.acme.companyId, contactId: first.contactId };
      expect(await suite.t.model(Conversation.name).countDocuments(ofContact)).toBe(3);
      const sent = (await suite.recorder.events()).filter((event) => event.type === 'message.sent');
      expect(sent).toEqual([]);
    });

    it('answers 400 for a contact that is not the company’s, unknown or malformed', async () => {
      const foreignContact = await newContact(suite.globex);
      const foreign = await suite.t.http.post('/v1/conversations').set(suite.acme.auth).send({ contactId: foreignContact }).expect(400);
      expect(foreign.body.errors).toEqual([{ field: 'contactId', message: 'contact not found' }]);
      await suite.t.http.post('/v1/conversations').set(suite.acme.auth).send({ contactId: '6650f0c2a1b2c3d4e5f60718' }).expect(400);
      const malformed = await suite.t.http.post('/v1/conversations').set(suite.acme.auth).send({ contactId: 'nope' }).expect(400);
      expect(malformed.body.errors).toEqual([{ field: 'contactId', message: 'contactId must be a 24-character hex id' }]);
      expect(await suite.recorder.events()).toEqual([]);
    });

    it('answers 400 for missing, wrongly typed, unknown and operator fields', async () => {
      const contactId = await newContact(suite.acme);
      const cases: Record<string, unknown>[] = [
        {},
        { contactId, priority: 'urgent' },
        { contactId, channel: 'web chat' },
        { contactId, channel: 'x'.repeat(65) },
        { contactId, subject: 42 },
        { contactId, message: '' },
        { contactId, message: 'x'.repeat(4097) },
        { contactId, status: 'human' },
        { contactId: { $gt: '' } },
        { contactId, message: { $ne: null } },
      ];
      for (const body of cases) {
        const response = await suite.t.http.post('/v1/conversations').set(suite.acme.auth).send(body);
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
      expect(await suite.t.model(Conversation.name).countDocuments({ companyId: suite.acme.companyId, contactId })).toBe(0);
    });

    it('needs a bearer token', async () => {
      await suite.t.http.post('/v1/conversations').send({ contactId: await newContact(suite.acme) }).expect(401);
    });
  });

  describe('GET /v1/conversations/:id', () => {
    it('answers the conversation', async () => {
      const conversation = await start(suite.acme);
      const response = await suite.t.http.get(`/v1/conversations/${conversation.id}`).set(suite.acme.auth).expect(200);
      // A single GET also says where a queued conversation stands (null: not queued).
      expect(response.body).toEqual({ ...conversation, queue: null });
    });

    it('answers 404 for a missing, malformed or foreign id, never the data', async () => {
      const conversation = await start(suite.acme);
      const foreign = await suite.t.http.get(`/v1/conversations/${conversation.id}`).set(suite.globex.auth).expect(404);
      expect(foreign.body).toMatchObject({ status: 404, message: `Conversation ${conversation.id} not found` });
      expect(JSON.stringify(foreign.body)).not.toContain(conversation.contactId);
      await suite.t.http.get('/v1/conversations/6650f0c2a1b2c3d4e5f60718').set(suite.acme.auth).expect(404);
      await suite.t.http.get('/v1/conversations/not-an-id').set(suite.acme.auth).expect(404);
    });
  });


  describe('the embedded contact', () => {
    it('comes with every conversation of a page, without reading contacts', async () => {
      const hooli = await registerCompany(suite.t.http, 'Hooli');
      const contacts = suite.t.app.get(ContactIdentities);
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
      // The page reads through the driver (TenantRepository.findPlain: one `find` command each): none on contacts, since
      // each conversation keeps a copy of its contact.
      const contactsModel = suite.t.model('Contact');
      const command = jest.spyOn(contactsModel.db.db!, 'command');
      const contactFinds = () => command.mock.calls.filter(([sent]) => (sent as { find?: string }).find === contactsModel.collection.collectionName);
      try {
        const page = await suite.t.http.get('/v1/conversations').set(hooli.auth).expect(200);
        expect(page.body.data).toHaveLength(3);
        for (const conversation of page.body.data) {
          expect(conversation.contact).toEqual(expected.get(conversation.id));
          expect(conversation.contact.id).toBe(conversation.contactId);
        }
        expect(contactFinds()).toHaveLength(0);
      } finally {
        command.mockRestore();
      }
    });

    it('comes with GET, assign, close and PATCH answers; null once the contact is deleted', async () => {
      const conversation = await start(suite.acme);
      const path = `/v1/conversations/${conversation.id}`;
      const contact = { id: conversation.contactId, name: 'Grace', email: expect.stringMatching(/^contact-/), phone: null };
      expect((await suite.t.http.get(path).set(suite.acme.auth).expect(200)).body.contact).toEqual(contact);
      expect((await suite.t.http.patch(path).set(suite.acme.auth).send({ priority: 'high' }).expect(200)).body.contact).toEqual(contact);
      const assigned = await suite.t.http.post(`${path}/assign`).set(suite.acme.auth).send({ agentId: suite.acme.agentId }).expect(200);
      expect(assigned.body.contact).toEqual(contact);

      await suite.t.http.delete(`/v1/contacts/${conversation.contactId}`).set(suite.acme.auth).expect(200);
      const closed = await suite.t.http.post(`${path}/close`).set(suite.acme.auth).send({}).expect(200);
      expect(closed.body).toMatchObject({ contactId: conversation.contactId, contact: null, status: 'closed' });
      // Events carry the contact as it was when they were written; the contact's deletion has its own.
      const all = await suite.recorder.events();
      expect(all.map((event) => event.type)).toEqual(['conversation.priority_changed', 'conversation.assigned', 'contact.deleted', 'conversation.closed']);
      expect(all[2].data).toEqual({ contactId: conversation.contactId });
      const events = all.filter((event) => event.type !== 'contact.deleted');
      expect(events.map((event) => (event.data as { conversation: { contact: unknown } }).conversation.contact)).toEqual([contact, contact, null]);
    });
  });


  it('documents every conversation route with its body and errors', async () => {
    const { body: document } = await suite.t.http.get('/docs-json').expect(200);
    const assign = document.paths['/v1/conversations/{id}/assign'].post;
    expect(assign.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/AssignConversationDto');
    expect(Object.keys(assign.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '409', '429']));
    const create = document.paths['/v1/conversations'].post;
    expect(create.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreateConversationDto');
    expect(Object.keys(create.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '409', '429']));
    const list = document.paths['/v1/conversations'].get;
    expect(list.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(
      ['assignedAgentId', 'channel', 'contactId', 'createdAfter', 'createdBefore', 'limit', 'priority', 'snoozed', 'sort', 'startAfter', 'status', 'tags', 'unassigned'],
    );
    expect(document.paths['/v1/conversations/{id}'].patch.requestBody.content['application/json'].schema.$ref).toBe(
      '#/components/schemas/UpdateConversationDto',
    );
  });
});
