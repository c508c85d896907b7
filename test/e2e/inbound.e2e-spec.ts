import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { createApiKey, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { EventRecorder } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const PATH = '/api/external/messages';

describe('POST /api/external/messages', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let acmeKey: string;
  let globexKey: string;
  let recorder: EventRecorder;
  let phoneSequence = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    acmeKey = await createApiKey(t.http, acme, ['messages:write']);
    globexKey = await createApiKey(t.http, globex, ['messages:write', 'webhooks:manage']);
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  /** A phone number no other test uses, in international format. */
  function newPhone(): string {
    phoneSequence += 1;
    return `+1415555${String(phoneSequence).padStart(4, '0')}`;
  }

  const receive = (body: object, key = acmeKey) => t.http.post(PATH).set('x-api-key', key).send(body);

  const conversationsOf = (company: TestCompany, contactId: string) =>
    t.model<Conversation>(Conversation.name).find({ companyId: company.companyId, contactId }).sort({ _id: 1 }).lean();

  it('creates the contact and a bot conversation, stores the inbound message and emits created then received', async () => {
    const phone = newPhone();
    const response = await receive({ from: { phone, name: 'Grace Hopper' }, text: 'Where is my order?' }).expect(201);
    const { message, conversation } = response.body.data;
    expect(response.body).toEqual({ success: true, data: { message: expect.any(Object), conversation: expect.any(Object), duplicate: false } });
    expect(conversation).toMatchObject({
      channel: 'api',
      status: 'bot',
      priority: 'medium',
      assignedAgentId: null,
      lastMessageAt: message.createdAt,
      firstResponseAt: null,
    });
    expect(message).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      conversationId: conversation.id,
      direction: 'inbound',
      type: 'text',
      text: 'Where is my order?',
      caption: null,
      media: null,
      template: null,
      senderType: 'contact',
      senderId: conversation.contactId,
      externalId: null,
      delivery: null,
      private: false,
      mentions: [],
      createdAt: expect.any(String),
    });

    const contact = await t.model<Contact>(Contact.name).findOne({ _id: conversation.contactId, companyId: acme.companyId }).lean();
    expect(contact).toMatchObject({ phone, name: 'Grace Hopper' });

    expect((await recorder.events()).map((event) => event.type)).toEqual(['contact.created', 'conversation.created', 'message.received']);
    expect((await recorder.events())[0]).toMatchObject({ companyId: acme.companyId, data: { contact: { id: conversation.contactId, phone, name: 'Grace Hopper' } } });
    expect((await recorder.events())[1]).toMatchObject({ companyId: acme.companyId, data: { conversation: expect.objectContaining({ id: conversation.id, lastMessageAt: null }) } });
    expect((await recorder.events())[2]).toMatchObject({ companyId: acme.companyId, data: { message, conversation } });

    const listed = await t.http.get(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).expect(200);
    expect(listed.body.data).toEqual([message]);
  });

  it('adds later messages to the contact’s open conversation, whatever its status, without conversation.created', async () => {
    const phone = newPhone();
    const first = await receive({ from: { phone }, text: 'one' }).expect(201);
    const conversationId = first.body.data.conversation.id;
    await t.http.post(`/v1/conversations/${conversationId}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
    await recorder.clear();

    const second = await receive({ from: { phone: phone.replace('+1', '+1 ') }, text: 'two' }).expect(201);
    expect(second.body.data.conversation).toMatchObject({ id: conversationId, status: 'human', assignedAgentId: acme.agentId });
    expect((await recorder.events()).map((event) => event.type)).toEqual(['message.received']);
    expect(await conversationsOf(acme, first.body.data.conversation.contactId)).toHaveLength(1);
  });

  it('keeps one open conversation per channel (lower-cased) and finds the contact by e-mail too', async () => {
    const email = `ada-${Date.now()}@example.test`;
    const api = await receive({ from: { email }, text: 'by api' }).expect(201);
    const whatsapp = await receive({ from: { email: email.toUpperCase() }, text: 'by whatsapp', channel: 'WhatsApp' }).expect(201);
    const again = await receive({ from: { email }, text: 'whatsapp again', channel: 'whatsapp' }).expect(201);
    expect(whatsapp.body.data.conversation.contactId).toBe(api.body.data.conversation.contactId);
    expect(whatsapp.body.data.conversation.channel).toBe('whatsapp');
    expect(whatsapp.body.data.conversation.id).not.toBe(api.body.data.conversation.id);
    expect(again.body.data.conversation.id).toBe(whatsapp.body.data.conversation.id);
    expect((await recorder.events()).filter((event) => event.type === 'conversation.created')).toHaveLength(2);
  });

  it('never reopens a closed conversation: the next message starts a new one', async () => {
    const phone = newPhone();
    const first = await receive({ from: { phone }, text: 'hello' }).expect(201);
    const closedId = first.body.data.conversation.id;
    await t.http.post(`/v1/conversations/${closedId}/close`).set(acme.auth).send({ reason: 'done' }).expect(200);
    await recorder.clear();

    const next = await receive({ from: { phone }, text: 'me again' }).expect(201);
    expect(next.body.data.conversation.id).not.toBe(closedId);
    expect(next.body.data.conversation.status).toBe('bot');
    expect((await recorder.events()).map((event) => event.type)).toEqual(['conversation.created', 'message.received']);
    const all = await conversationsOf(acme, first.body.data.conversation.contactId);
    expect(all.map((conversation) => [conversation._id.toHexString(), conversation.status, conversation.isOpen])).toEqual([
      [closedId, 'closed', false],
      [next.body.data.conversation.id, 'bot', true],
    ]);
    const closedMessages = await t.http.get(`/v1/conversations/${closedId}/messages`).set(acme.auth).expect(200);
    expect(closedMessages.body.data.map((message: { text: string }) => message.text)).toEqual(['hello']);
  });

  it('opens exactly one conversation for 20 concurrent messages from a new contact', async () => {
    const phone = newPhone();
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, index) => receive({ from: { phone }, text: `burst ${index}` })),
    );
    expect(responses.map((response) => response.status)).toEqual(Array(20).fill(201));
    const conversationIds = new Set(responses.map((response) => response.body.data.conversation.id));
    expect(conversationIds.size).toBe(1);
    const [conversationId] = conversationIds;

    const contacts = await t.model<Contact>(Contact.name).find({ companyId: acme.companyId, phone }).lean();
    expect(contacts).toHaveLength(1);
    const conversations = await conversationsOf(acme, contacts[0]._id.toHexString());
    expect(conversations.map((conversation) => conversation._id.toHexString())).toEqual([conversationId]);
    const messages = await t
      .model<Message & { createdAt: Date }>(Message.name)
      .find({ companyId: acme.companyId, conversationId })
      .lean();
    expect(messages.map((message) => message.text).sort()).toEqual(
      Array.from({ length: 20 }, (_, index) => `burst ${index}`).sort(),
    );
    expect((await recorder.events()).filter((event) => event.type === 'conversation.created')).toHaveLength(1);
    expect((await recorder.events()).filter((event) => event.type === 'message.received')).toHaveLength(20);
    const latest = Math.max(...messages.map((message) => message.createdAt.getTime()));
    expect(conversations[0].lastMessageAt?.getTime()).toBe(latest);
  });

  it('keeps workspaces apart: the key’s company owns the contact and conversation', async () => {
    const phone = newPhone();
    const globexMessage = await receive({ from: { phone }, text: 'to globex' }, globexKey).expect(201);
    const acmeMessage = await receive({ from: { phone }, text: 'to acme' }).expect(201);
    expect(acmeMessage.body.data.conversation.contactId).not.toBe(globexMessage.body.data.conversation.contactId);
    await t.http.get(`/v1/conversations/${globexMessage.body.data.conversation.id}`).set(acme.auth).expect(404);
    await t.http.get(`/v1/conversations/${globexMessage.body.data.conversation.id}`).set(globex.auth).expect(200);
    // Each company's contact.created, conversation.created and message.received, in its own log's order.
    const typesOf = async (companyId: string) => (await recorder.events()).filter((event) => event.companyId === companyId).map((event) => event.type);
    for (const company of [globex, acme]) expect(await typesOf(company.companyId)).toEqual(['contact.created', 'conversation.created', 'message.received']);
  });

  it('answers 400 in the envelope for bad bodies and stores nothing', async () => {
    const phone = newPhone();
    const cases: [object, string | RegExp][] = [
      [{ text: 'no sender' }, /^from must/],
      [{ from: {}, text: 'empty sender' }, 'from must have a phone or an e-mail address'],
      [{ from: { name: 'Only a name' }, text: 'x' }, 'from must have a phone or an e-mail address'],
      [{ from: 'grace', text: 'x' }, /from must be an object/],
      [{ from: { phone }, text: '' }, 'text must not be empty'],
      [{ from: { phone } }, /text must be/],
      [{ from: { phone }, text: 'x'.repeat(4097) }, 'text must be shorter than or equal to 4096 characters'],
      [{ from: { phone }, text: 7 }, 'text must be a string'],
      [{ from: { phone, email: 'not-an-email' }, text: 'x' }, 'from.email must be an e-mail address'],
      [{ from: { phone }, text: 'x', channel: 'sms chat' }, /channel may contain only/],
      [{ from: { phone }, text: 'x', direction: 'outbound' }, 'direction is not a field of this body'],
      [{ from: { phone, admin: true }, text: 'x' }, 'from.admin is not a field of this body'],
      [{ from: { phone: { $gt: '' } }, text: 'x' }, /\$gt/],
      [{ from: { phone: '12' }, text: 'x' }, /phone/],
      [{ from: { phone: 'not a phone' }, text: 'x' }, /phone/],
    ];
    for (const [body, error] of cases) {
      const response = await receive(body);
      expect({ body, status: response.status, success: response.body.success }).toEqual({ body, status: 400, success: false });
      expect(Object.keys(response.body).sort()).toEqual(['error', 'success']);
      if (typeof error === 'string') expect({ body, error: response.body.error }).toEqual({ body, error });
      else expect(response.body.error).toMatch(error);
    }
    expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId, phone })).toBe(0);
    expect(await recorder.events()).toEqual([]);
  });

  it('answers 401 without a valid key and 403 without the messages:write scope, in the envelope', async () => {
    const body = { from: { phone: newPhone() }, text: 'x' };
    expect((await t.http.post(PATH).send(body).expect(401)).body).toEqual({
      success: false,
      error: 'Missing API key (x-api-key header)',
    });
    expect((await t.http.post(PATH).set('x-api-key', 'pk_forged').send(body).expect(401)).body).toEqual({
      success: false,
      error: 'Invalid or revoked API key',
    });
    await t.http.post(PATH).set(acme.auth).send(body).expect(401);

    const webhooksOnly = await createApiKey(t.http, acme, ['webhooks:manage']);
    expect((await receive(body, webhooksOnly).expect(403)).body).toEqual({
      success: false,
      error: 'The API key lacks the scope messages:write',
    });

    const revocable = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'short', scopes: ['messages:write'] }).expect(201);
    await t.http.delete(`/v1/api-keys/${revocable.body.id}`).set(acme.auth).expect(200);
    await receive(body, revocable.body.key).expect(401);
    expect(await recorder.events()).toEqual([]);
  });

  it('answers 429 in the envelope with Retry-After once the key’s limit is spent', async () => {
    // Windows are aligned on the clock: an hour's keeps this test's few requests inside one.
    const limited = await createTestApp({ env: { THROTTLE_LIMIT: '2', THROTTLE_TTL_MS: '3600000' } });
    try {
      const company = await registerCompany(limited.http, 'Limited');
      const key = await createApiKey(limited.http, company, ['messages:write']);
      const send = () => limited.http.post(PATH).set('x-api-key', key).send({ from: { phone: newPhone() }, text: 'x' });
      await send().expect(201);
      await send().expect(201);
      const refused = await send().expect(429);
      expect(refused.body).toEqual({ success: false, error: expect.any(String) });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await limited.close();
    }
  });

  it('is documented as an Interface B route with its envelope and errors', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const operation = document.paths[PATH].post;
    expect(operation.security).toEqual([{ 'api-key': [] }]);
    expect(operation.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/InboundMessageDto');
    expect(operation.responses['201'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/InboundMessageEnvelope',
    );
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '403', '429']));
  });
});
