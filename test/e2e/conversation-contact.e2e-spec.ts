import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { ObjectId } from 'mongodb';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { EventRelay } from '../../src/events/event-relay.js';
import { asSnapshot } from '../support/conversations.js';
import { createApiKey, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** Contract section 13: every conversation snapshot in event data embeds its contact, taken when the event is written. */
describe('the contact in conversation snapshots', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let key: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    key = await createApiKey(t.http, acme, ['messages:write']);
    receiver = await WebhookReceiver.start();
    await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/acme'), events: ['CHAT_SENT'] }).expect(201);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  /** The events of `type` about the conversation, from the feed, oldest first. */
  async function feedEvents(company: TestCompany, type: string, conversationId: string) {
    await t.app.get(EventRelay).idle();
    const page = await t.http.get(`/v1/events?types=${type}&limit=100`).set(company.auth).expect(200);
    return page.body.data.filter((event: { data: { conversation: { id: string } } }) => event.data.conversation.id === conversationId);
  }

  async function inbound(phone: string, name?: string) {
    const response = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { phone, name }, text: 'Hello' }).expect(201);
    return response.body.data as { conversation: { id: string; contactId: string } };
  }

  it('message.sent tells a connector whom to send to: webhook, feed and REST show the same contact', async () => {
    const { conversation } = await inbound('+14155550101', 'Grace Hopper');
    const reply = await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).send({ text: 'Hi Grace' }).expect(201);
    const contact = { id: conversation.contactId, name: 'Grace Hopper', email: null, phone: '+14155550101' };

    const [delivery] = await receiver.received('/acme', 1);
    const body = JSON.parse(delivery.body);
    expect(body).toMatchObject({ type: 'CHAT_SENT', data: { message: { id: reply.body.id }, conversation: { id: conversation.id, contact } } });
    const [sent] = await feedEvents(acme, 'message.sent', conversation.id);
    expect(sent.data.conversation.contact).toEqual(contact);
    const rest = await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200);
    expect(rest.body.contact).toEqual(contact);
    expect(sent.data.conversation).toEqual({ ...asSnapshot(rest.body), updatedAt: expect.any(String) });
  });

  it('a changed phone reaches the next event, while earlier events keep the contact as it was', async () => {
    const { conversation } = await inbound('+14155550102', 'Alan');
    await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).send({ text: 'first' }).expect(201);
    await t.http.patch(`/v1/contacts/${conversation.contactId}`).set(acme.auth).send({ phone: '+14155550199', email: 'alan@example.com' }).expect(200);
    await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).send({ text: 'second' }).expect(201);

    const events = await feedEvents(acme, 'message.sent', conversation.id);
    expect(events.map((event: { data: { conversation: { contact: { phone: string } } } }) => event.data.conversation.contact.phone)).toEqual([
      '+14155550102',
      '+14155550199',
    ]);
    const rest = await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200);
    expect(rest.body.contact).toEqual({ id: conversation.contactId, name: 'Alan', email: 'alan@example.com', phone: '+14155550199' });
    const listed = await t.http.get('/v1/conversations').set(acme.auth).expect(200);
    expect(listed.body.data.find((row: { id: string }) => row.id === conversation.id).contact.phone).toBe('+14155550199');
  });

  it('a name the channel reports later fills the contact, and its conversations show it', async () => {
    const { conversation } = await inbound('+14155550103');
    expect((await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200)).body.contact.name).toBeNull();
    await inbound('+14155550103', 'Ada Lovelace');
    expect((await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200)).body.contact.name).toBe('Ada Lovelace');
  });

  it('a deleted contact leaves its conversations, and their later events, with contact null', async () => {
    const { conversation } = await inbound('+14155550104', 'Gone');
    await t.http.delete(`/v1/contacts/${conversation.contactId}`).set(acme.auth).expect(200);
    const rest = await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200);
    expect(rest.body).toMatchObject({ contactId: conversation.contactId, contact: null });
    await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).send({ text: 'still here' }).expect(201);
    const [sent] = await feedEvents(acme, 'message.sent', conversation.id);
    expect(sent.data.conversation.contact).toBeNull();
  });

  it("another company's contact change touches none of this company's conversations", async () => {
    const { conversation } = await inbound('+14155550105', 'Kept');
    const globexContact = await t.http.post('/v1/contacts').set(globex.auth).send({ name: 'Other', phone: '+14155550105' }).expect(201);
    await t.http.patch(`/v1/contacts/${globexContact.body.id}`).set(globex.auth).send({ name: 'Changed' }).expect(200);
    await t.http.delete(`/v1/contacts/${globexContact.body.id}`).set(globex.auth).expect(200);
    const rest = await t.http.get(`/v1/conversations/${conversation.id}`).set(acme.auth).expect(200);
    expect(rest.body.contact).toMatchObject({ name: 'Kept', phone: '+14155550105' });
  });
});

describe('conversations stored before they kept their contact', () => {
  let engine: EmbeddedMongo;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
  });
  afterAll(() => engine.stop());

  it('get the copy once, when the next version starts', async () => {
    const env = { MONGODB_URI: `${engine.uri}upgrade` };
    const before = await createTestApp({ env });
    const company = await registerCompany(before.http, 'Acme');
    const contact = await before.http.post('/v1/contacts').set(company.auth).send({ name: 'Legacy', phone: '+14155550106' }).expect(201);
    const started = await before.http.post('/v1/conversations').set(company.auth).send({ contactId: contact.body.id }).expect(201);
    // As an earlier version stored it: no copy of the contact, and no record of the migration.
    const conversations = before.model<Conversation>(Conversation.name);
    await conversations.collection.updateOne({ _id: new ObjectId(started.body.id) }, { $unset: { contact: '' } });
    await conversations.db.collection('migrations').deleteMany({});
    await before.close();

    const after = await createTestApp({ env });
    try {
      const rest = await after.http.get(`/v1/conversations/${started.body.id}`).set(company.auth).expect(200);
      expect(rest.body.contact).toEqual({ id: contact.body.id, name: 'Legacy', email: null, phone: '+14155550106' });
      const migrations = after.model<Conversation>(Conversation.name).db.collection('migrations');
      expect(await migrations.findOne({ _id: 'conversations.contact' as never })).toMatchObject({ completedAt: expect.any(Date) });
    } finally {
      await after.close();
    }
  });
});
