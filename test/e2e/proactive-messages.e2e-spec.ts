import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { approvedTemplate, createChannel } from '../support/channels.js';
import { EventRecorder } from '../support/event-log.js';
import { addAgent, createApiKey, twoCompanies, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const TEMPLATE = { name: 'order_update', language: 'en', variables: ['1042'] };

/** Proactive messages (contract section 17): POST /v1/messages starts the conversation. */
describe('POST /v1/messages', () => {
  let t: TestApp;
  let recorder: EventRecorder;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let messagesKey: string;
  let phones = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    recorder = new EventRecorder(t);
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
    messagesKey = await createApiKey(t.http, acme, ['messages:write']);
    const templatesKey = await createApiKey(t.http, acme, ['templates:manage']);
    await createChannel(t, acme, { key: 'whatsapp', type: 'whatsapp', name: 'WhatsApp' });
    await createChannel(t, acme, { key: 'paused', type: 'whatsapp', name: 'Paused', isActive: false });
    await approvedTemplate(t, acme, templatesKey, { channel: 'whatsapp', name: 'order_update', body: 'Your order {{1}} is on its way.' });
  });
  beforeEach(() => recorder.clear());
  afterAll(() => t.close());

  /** A phone number no contact of the test has yet. */
  const newPhone = () => `+1415555${String(1000 + (phones += 1)).padStart(4, '0')}`;
  const post = (caller: { auth: { Authorization: string } }, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    t.http.post('/v1/messages').set(caller.auth).set(headers).send(body);
  const counts = async (company: TestCompany) => ({
    contacts: await t.model<Contact>(Contact.name).countDocuments({ companyId: company.companyId }),
    conversations: await t.model<Conversation>(Conversation.name).countDocuments({ companyId: company.companyId }),
    messages: await t.model<Message>(Message.name).countDocuments({ companyId: company.companyId }),
  });

  it('creates the contact, opens a conversation assigned to the caller and sends the template: 201 { message, conversation, contact }', async () => {
    const phone = newPhone();
    const response = await post(agent, { to: { phone }, channel: 'WhatsApp', template: TEMPLATE, name: 'Grace Hopper' }).expect(201);
    const { message, conversation, contact } = response.body;
    expect(contact).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{24}$/), name: 'Grace Hopper', phone, email: null });
    expect(conversation).toMatchObject({
      contactId: contact.id,
      channel: 'whatsapp',
      status: 'human',
      assignedAgentId: agent.agentId,
      assignedBy: { kind: 'agent', id: agent.agentId },
      replyWindowExpiresAt: null,
      firstResponseAt: message.createdAt,
      lastMessageAt: message.createdAt,
    });
    expect(message).toMatchObject({
      conversationId: conversation.id,
      direction: 'outbound',
      type: 'template',
      text: 'Your order 1042 is on its way.',
      template: { name: 'order_update', language: 'en', variables: ['1042'] },
      senderType: 'agent',
      senderId: agent.agentId,
    });
    const all = await recorder.events();
    expect(all.map((event) => event.type)).toEqual(['contact.created', 'conversation.created', 'conversation.assigned', 'message.sent']);
    expect(all[0].data).toMatchObject({ contact: { id: conversation.contactId } });
    const events = all.slice(1);
    expect(events[1].data).toMatchObject({ agentId: agent.agentId, previousAgentId: null, conversation: { id: conversation.id, status: 'human' } });
    expect(events[2].data).toEqual({ message, conversation });
  });

  it('refuses text on a channel with a window for a new conversation (409, closedAt null) and stores nothing: no contact, no conversation', async () => {
    const before = await counts(acme);
    const response = await post(acme, { to: { phone: newPhone() }, channel: 'whatsapp', text: 'Hello!', name: 'Nobody' });
    expect(response.status).toBe(409);
    expect(response.body).toMatchObject({ type: expect.stringMatching(/reply-window-closed$/), closedAt: null, conversationId: null, channel: 'whatsapp' });
    expect(response.body.detail).toBe(
      'There is no open reply window for the contact on channel whatsapp: the contact has not written on it yet. Only an approved template can be sent until the contact writes again',
    );
    expect(await counts(acme)).toEqual(before);
    expect(await recorder.events()).toEqual([]);
  });

  it('uses the contact’s open conversation on the channel as it is, and sends text while its window is open', async () => {
    const email = uniqueEmail('customer');
    const inbound = await t.http
      .post('/api/external/messages')
      .set('x-api-key', messagesKey)
      .send({ from: { email }, text: 'Hi', channel: 'whatsapp' })
      .expect(201);
    const before = await counts(acme);
    const response = await post(acme, { to: { email: email.toUpperCase() }, channel: 'whatsapp', text: 'Thanks for writing!' }).expect(201);
    expect(response.body.conversation).toMatchObject({ id: inbound.body.data.conversation.id, status: 'bot', assignedAgentId: null });
    expect(response.body.contact.id).toBe(inbound.body.data.conversation.contactId);
    expect(response.body.message).toMatchObject({ type: 'text', text: 'Thanks for writing!' });
    expect(await counts(acme)).toEqual({ ...before, messages: before.messages + 1 });
    const byId = await post(acme, { to: { contactId: response.body.contact.id }, channel: 'whatsapp', template: TEMPLATE }).expect(201);
    expect(byId.body.conversation.id).toBe(inbound.body.data.conversation.id);
  });

  it('sends text on a key without a channel record, as before channels were records', async () => {
    const { body } = await post(acme, { to: { email: uniqueEmail('lead') }, channel: 'web', text: 'Hello from Acme' }).expect(201);
    expect(body.conversation).toMatchObject({ channel: 'web', status: 'human', assignedAgentId: acme.agentId, replyWindowExpiresAt: null });
  });

  it.each([
    ['no recipient', { to: {}, channel: 'web', text: 'x' }, 'to'],
    ['two recipients', { to: { phone: '+14155550000', email: 'a@example.test' }, channel: 'web', text: 'x' }, 'to'],
    ['a malformed contact id', { to: { contactId: 'nope' }, channel: 'web', text: 'x' }, 'to.contactId'],
    ['an unknown contact', { to: { contactId: '6650f0c2a1b2c3d4e5f60719' }, channel: 'web', text: 'x' }, 'to.contactId'],
    ['a malformed phone', { to: { phone: '12' }, channel: 'web', text: 'x' }, 'to.phone'],
    ['an impossible phone', { to: { phone: '+1 000' }, channel: 'web', text: 'x' }, 'to.phone'],
    ['a malformed e-mail', { to: { email: 'not-an-email' }, channel: 'web', text: 'x' }, 'to.email'],
    ['no channel', { to: { phone: '+14155550000' }, text: 'x' }, 'channel'],
    ['a malformed channel', { to: { phone: '+14155550000' }, channel: 'what sapp', text: 'x' }, 'channel'],
    ['neither text nor template', { to: { phone: '+14155550000' }, channel: 'web' }, 'text'],
    ['both text and template', { to: { phone: '+14155550000' }, channel: 'whatsapp', text: 'x', template: TEMPLATE }, 'template'],
    ['an unknown template', { to: { phone: '+14155550000' }, channel: 'whatsapp', template: { name: 'nope', language: 'en' } }, 'template.name'],
    ['a wrong variable count', { to: { phone: '+14155550000' }, channel: 'whatsapp', template: { ...TEMPLATE, variables: [] } }, 'template.variables'],
    ['a name with a contact id', { to: { contactId: '6650f0c2a1b2c3d4e5f60719' }, channel: 'web', text: 'x', name: 'Grace' }, 'name'],
  ])('answers 400 naming the field for %s, and stores nothing', async (_case, body, field) => {
    const before = await counts(acme);
    const response = await post(acme, body).expect(400);
    expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
    expect(await counts(acme)).toEqual(before);
  });

  it('answers 409 on an inactive channel, storing nothing', async () => {
    const before = await counts(acme);
    const response = await post(acme, { to: { phone: newPhone() }, channel: 'paused', template: TEMPLATE }).expect(409);
    expect(response.body.detail).toMatch(/^Channel paused is inactive/);
    expect(await counts(acme)).toEqual(before);
  });

  it("never reaches another company's contact: its id is an unknown contact, its phone makes a contact of the caller's company", async () => {
    const phone = newPhone();
    const globexContact = await t.http.post('/v1/contacts').set(globex.auth).send({ phone, name: 'Globex customer' }).expect(201);
    await post(acme, { to: { contactId: globexContact.body.id }, channel: 'web', text: 'x' }).expect(400);
    const sent = await post(acme, { to: { phone }, channel: 'web', text: 'Hello' }).expect(201);
    expect(sent.body.contact.id).not.toBe(globexContact.body.id);
    expect(sent.body.contact.name).toBeNull();
    expect(await t.model<Conversation>(Conversation.name).countDocuments({ companyId: globex.companyId })).toBe(0);
  });

  it('is idempotent with Idempotency-Key: a repeat answers the same, sends nothing more; another body answers 422', async () => {
    const body = { to: { phone: newPhone() }, channel: 'whatsapp', template: TEMPLATE };
    const headers = { 'Idempotency-Key': `proactive-${phones}` };
    const first = await post(acme, body, headers).expect(201);
    const before = await counts(acme);
    const repeat = await post(acme, body, headers).expect(201);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.body).toEqual(first.body);
    expect(await counts(acme)).toEqual(before);
    await post(acme, { ...body, channel: 'web', template: undefined, text: 'other' }, headers).expect(422);
  });

  it('needs a bearer token', async () => {
    await t.http.post('/v1/messages').send({ to: { phone: newPhone() }, channel: 'web', text: 'x' }).expect(401);
  });
});
