import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { asSnapshot } from '../support/conversations.js';
import { EventRecorder, loggedEvent, settle } from '../support/event-log.js';
import { addAgent, createApiKey, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** Private notes (contract section 15): for the team only, never sent, never counted as the conversation's activity. */
describe('private notes: POST /v1/conversations/:id/messages { text, private: true }', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let recorder: EventRecorder;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  async function start(company: TestCompany): Promise<string> {
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact'), name: 'Grace' });
    const response = await t.http.post('/v1/conversations').set(company.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    await recorder.clear();
    return response.body.id as string;
  }

  const note = (company: TestCompany, id: string, body: Record<string, unknown>) =>
    t.http.post(`/v1/conversations/${id}/messages`).set(company.auth).send({ private: true, ...body });
  const storedConversation = (company: TestCompany, id: string) =>
    t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
  const storedMessages = (company: TestCompany, id: string) =>
    t.model<Message>(Message.name).find({ conversationId: id, companyId: company.companyId }).lean();

  it('stores an internal, private message with its mentions, emits conversation.note_added and nothing else', async () => {
    const id = await start(acme);
    const supervisor = await addAgent(t, acme, 'supervisor');
    const before = await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200);
    const response = await note(acme, id, { text: 'VIP: refund without asking', mentions: [supervisor.agentId] }).expect(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      conversationId: id,
      direction: 'internal',
      type: 'text',
      text: 'VIP: refund without asking',
      caption: null,
      media: null,
      template: null,
      senderType: 'agent',
      senderId: acme.agentId,
      externalId: null,
      delivery: null,
      private: true,
      mentions: [supervisor.agentId],
      createdAt: expect.any(String),
    });
    const [stored] = await storedMessages(acme, id);
    expect(stored).toMatchObject({ direction: 'internal', private: true, text: 'VIP: refund without asking' });
    expect(stored.delivery).toBeUndefined();
    expect(stored.mentions?.map(String)).toEqual([supervisor.agentId]);

    // The conversation did not move: no activity, no first response, not even updatedAt.
    const after = await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200);
    expect(after.body).toEqual(before.body);
    expect(await recorder.events()).toEqual([
      loggedEvent('conversation.note_added', acme.companyId, new Date(response.body.createdAt), {
        message: response.body,
        conversation: asSnapshot(before.body),
        mentions: [supervisor.agentId],
      }),
    ]);
  });

  it('leaves the first response to the first real reply', async () => {
    const id = await start(acme);
    await note(acme, id, { text: 'Checking with billing' }).expect(201);
    expect((await storedConversation(acme, id))?.firstResponseAt).toBeNull();
    const reply = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'Here you go' }).expect(201);
    const conversation = await storedConversation(acme, id);
    expect(conversation?.firstResponseAt?.toISOString()).toBe(reply.body.createdAt);
    expect(conversation?.lastMessageAt?.toISOString()).toBe(reply.body.createdAt);
  });

  it('may be added to a closed conversation, where messages to the contact are refused', async () => {
    const id = await start(acme);
    await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}).expect(200);
    await recorder.clear();
    await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'Hello?' }).expect(400);
    await note(acme, id, { text: 'Closed as a duplicate of another ticket' }).expect(201);
    expect((await recorder.events()).map((event) => event.type)).toEqual(['conversation.note_added']);
  });

  it('refuses mentions that are not active agents of the company, naming the field, and stores nothing', async () => {
    const id = await start(acme);
    const deactivated = await addAgent(t, acme, 'agent');
    await t.http.delete(`/v1/agents/${deactivated.agentId}`).set(acme.auth).expect(200);
    await recorder.clear();
    for (const mentions of [[globex.agentId], [deactivated.agentId], ['6650f0c2a1b2c3d4e5f60718'], [acme.agentId, globex.agentId]]) {
      const response = await note(acme, id, { text: 'FYI', mentions }).expect(400);
      expect(response.body.errors).toEqual([{ field: 'mentions', message: expect.stringContaining('mentions must be active agents of your company') }]);
      expect(response.body.errors[0].message).toContain(mentions.at(-1));
    }
    for (const mentions of [['not-an-id'], 'someone', [acme.agentId, acme.agentId]]) {
      const response = await note(acme, id, { text: 'FYI', mentions }).expect(400);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain('mentions');
    }
    expect(await storedMessages(acme, id)).toEqual([]);
    expect(await recorder.events()).toEqual([]);
  });

  it('refuses mentions outside a note, and a note without text, naming the field', async () => {
    const id = await start(acme);
    const mentionsWithoutNote = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'Hi', mentions: [acme.agentId] }).expect(400);
    expect(mentionsWithoutNote.body.errors).toEqual([{ field: 'mentions', message: 'mentions go only with private notes (private: true)' }]);
    const noText = await note(acme, id, {}).expect(400);
    expect(noText.body.errors).toEqual(
      ['text', 'cannedResponseId', 'template'].map((field) => ({ field, message: 'exactly one of text, cannedResponseId, template is required' })),
    );
    const emptyText = await note(acme, id, { text: '' }).expect(400);
    expect(emptyText.body.errors[0].field).toBe('text');
    const privateNull = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'Hi', private: null }).expect(400);
    expect(privateNull.body.errors[0].field).toBe('private');
    expect(await storedMessages(acme, id)).toEqual([]);
  });

  it("answers 404 for another company's conversation, stores nothing there", async () => {
    const foreign = await start(globex);
    await note(acme, foreign, { text: 'peek' }).expect(404);
    await note(acme, 'not-an-id', { text: 'peek' }).expect(404);
    expect(await storedMessages(globex, foreign)).toEqual([]);
    expect(await recorder.events()).toEqual([]);
  });

  it('any agent may add one', async () => {
    const id = await start(acme);
    const agent = await addAgent(t, acme, 'agent');
    const response = await t.http.post(`/v1/conversations/${id}/messages`).set(agent.auth).send({ text: 'On it', private: true }).expect(201);
    expect(response.body).toMatchObject({ senderId: agent.agentId, private: true, mentions: [] });
  });

  describe('listing', () => {
    it('shows notes among the messages (private: false on the others); private=false leaves them out, private=true keeps only them', async () => {
      const id = await start(acme);
      const first = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'one' }).expect(201);
      const noted = await note(acme, id, { text: 'note' }).expect(201);
      const last = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'two' }).expect(201);
      const list = (query: string) => t.http.get(`/v1/conversations/${id}/messages${query}`).set(acme.auth).expect(200);

      expect((await list('')).body.data.map((message: { id: string; private: boolean }) => [message.id, message.private])).toEqual([
        [first.body.id, false],
        [noted.body.id, true],
        [last.body.id, false],
      ]);
      expect((await list('?private=false')).body.data.map((message: { id: string }) => message.id)).toEqual([first.body.id, last.body.id]);
      expect((await list('?private=true')).body.data.map((message: { id: string }) => message.id)).toEqual([noted.body.id]);
      await t.http.get(`/v1/conversations/${id}/messages?private=maybe`).set(acme.auth).expect(400);
    });

    it('keeps the filter across pages: the cursor carries it', async () => {
      const id = await start(acme);
      const sent: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        sent.push((await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: `m${index}` }).expect(201)).body.id);
        await note(acme, id, { text: `n${index}` }).expect(201);
      }
      const seen: string[] = [];
      let page = await t.http.get(`/v1/conversations/${id}/messages?private=false&limit=2`).set(acme.auth).expect(200);
      seen.unshift(...page.body.data.map((message: { id: string }) => message.id));
      while (page.body.nextCursor) {
        page = await t.http.get(`/v1/conversations/${id}/messages?limit=2&cursor=${page.body.nextCursor}`).set(acme.auth).expect(200);
        seen.unshift(...page.body.data.map((message: { id: string }) => message.id));
      }
      expect(seen).toEqual(sent);
      const cursor = (await t.http.get(`/v1/conversations/${id}/messages?private=false&limit=2`).set(acme.auth).expect(200)).body.nextCursor;
      await t.http.get(`/v1/conversations/${id}/messages?private=true&cursor=${cursor}`).set(acme.auth).expect(400);
      await t.http.get(`/v1/conversations/${id}/messages?private=false&cursor=${cursor}`).set(acme.auth).expect(200);
    });

    it('serves both filters from indexes, never a scan of the company: the conversation’s messages, or its notes alone', async () => {
      const id = await start(acme);
      const plan = async (filter: Record<string, unknown>) =>
        JSON.stringify(
          await t.model<Message>(Message.name)
            .find({ companyId: acme.companyId, conversationId: id, ...filter })
            .sort({ createdAt: -1, _id: -1 })
            .limit(51)
            .explain('executionStats'),
        );
      const withoutNotes = await plan({ private: { $in: [false, null] } });
      expect(withoutNotes).toContain('companyId_1_conversationId_1_createdAt_-1__id_-1');
      expect(withoutNotes).not.toContain('COLLSCAN');
      const notes = await plan({ private: true });
      expect(notes).toContain('notes_of_a_conversation');
      expect(notes).not.toContain('COLLSCAN');
    });
  });

  it('never reaches webhooks as a message event, nor delivery receipts; NOTE_ADDED goes to those who subscribed to it', async () => {
    const key = await createApiKey(t.http, acme, ['messages:write']);
    await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/messages'), events: ['message.sent', 'CHAT_SENT', 'message.received'] }).expect(201);
    await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/notes'), events: ['NOTE_ADDED'] }).expect(201);
    const id = await start(acme);
    const noted = await note(acme, id, { text: 'Do not tell the customer yet', mentions: [acme.agentId] }).expect(201);
    const reply = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'We are on it' }).expect(201);
    const [delivered] = await receiver.received('/notes', 1);
    await receiver.received('/messages', 1);
    await settle(t);

    const messages = receiver.to('/messages').map((request) => JSON.parse(request.body));
    expect(messages.map((body) => [body.type, body.data.message.id])).toEqual([['message.sent', reply.body.id]]);
    expect(JSON.parse(delivered.body)).toMatchObject({ type: 'NOTE_ADDED', data: { message: { id: noted.body.id, private: true }, mentions: [acme.agentId] } });
    expect(receiver.to('/notes')).toHaveLength(1);
    const deliveries = await t.model<WebhookDelivery>(WebhookDelivery.name).find({ companyId: acme.companyId }).lean();
    expect(deliveries.filter((delivery) => JSON.stringify(delivery).includes(noted.body.id)).map((delivery) => delivery.type)).toEqual(['NOTE_ADDED']);
    const logged = await t.model<LoggedEvent>(LoggedEvent.name).find({ companyId: acme.companyId, 'data.message.id': noted.body.id }).lean();
    expect(logged.map((event) => event.type)).toEqual(['conversation.note_added']);

    // A connector cannot report a delivery of a note: it was never sent.
    await t.http.post(`/api/external/messages/${noted.body.id}/status`).set('x-api-key', key).send({ status: 'delivered' }).expect(404);
  });

  it('counts neither as a message sent or received, in the metrics and the dashboard', async () => {
    const { acme: quiet } = await twoCompanies(t.http);
    const id = await start(quiet);
    await note(quiet, id, { text: 'one' }).expect(201);
    await note(quiet, id, { text: 'two' }).expect(201);
    const today = new Date().toISOString().slice(0, 10);
    const metrics = await t.http.get(`/v1/analytics/metrics?startDate=${today}&endDate=${today}&granularity=day`).set(quiet.auth).expect(200);
    expect(metrics.body.totals).toMatchObject({ messagesReceived: 0, messagesSent: 0, avgFirstResponseSeconds: null });
    const dashboard = await t.http.get('/v1/analytics/dashboard').set(quiet.auth).expect(200);
    expect(dashboard.body.messagesToday).toMatchObject({ received: 0, sent: 0 });
  });
});
