import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ApiKey } from '../../src/api-keys/api-key.schema.js';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { Message } from '../../src/messages/message.schema.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { settle } from '../support/event-log.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { listen, SseClients } from '../support/sse-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

let sequence = 0;
/** A phone no other test uses: a contact and conversations of its own. */
function newPhone(): string {
  sequence += 1;
  return `+1415888${String(sequence).padStart(4, '0')}`;
}

/** Contract section 13: API keys and webhooks limited to channels. */
describe('channel-scoped API keys and webhooks', () => {
  let t: TestApp;
  let base: string;
  let receiver: WebhookReceiver;
  const clients = new SseClients();

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    base = await listen(t.app);
    receiver = await WebhookReceiver.start();
  });
  afterEach(() => clients.closeAll());
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  /** A company with a key of every channel and a WhatsApp-only key, both with every scope. */
  async function company(name: string) {
    const registered = await registerCompany(t.http, name);
    const scopes = ['messages:write', 'events:read', 'webhooks:manage', 'media:read'] as const;
    return {
      ...registered,
      all: await createApiKey(t.http, registered, [...scopes]),
      whatsapp: await createApiKey(t.http, registered, [...scopes], ['WhatsApp']),
    };
  }
  type Company = Awaited<ReturnType<typeof company>>;

  const receive = (key: string, body: object) => t.http.post('/api/external/messages').set('x-api-key', key).send(body);
  const stored = async (c: TestCompany) => ({
    contacts: await t.model<Contact>(Contact.name).countDocuments({ companyId: c.companyId }),
    conversations: await t.model<Conversation>(Conversation.name).countDocuments({ companyId: c.companyId }),
    messages: await t.model<Message>(Message.name).countDocuments({ companyId: c.companyId }),
  });

  describe('API keys with channels', () => {
    it('stores them lower-cased and shows them; a key without them shows null', async () => {
      const acme = await registerCompany(t.http, 'Acme');
      const created = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'SMS', scopes: ['messages:write'], channels: ['SMS', 'web-chat'] }).expect(201);
      expect(created.body).toMatchObject({ name: 'SMS', scopes: ['messages:write'], channels: ['sms', 'web-chat'] });
      const plain = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'All', scopes: ['media:read'] }).expect(201);
      expect(plain.body).toMatchObject({ scopes: ['media:read'], channels: null });
      const listed = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
      expect(listed.body.data.map((key: { name: string; channels: unknown }) => [key.name, key.channels])).toEqual([
        ['All', null],
        ['SMS', ['sms', 'web-chat']],
      ]);
    });

    it.each([
      ['an empty list', [], 'channels must name at least one channel; leave it out for every channel'],
      ['the same channel twice, whatever the case', ['sms', 'SMS'], 'channels must not name a channel twice'],
      ['a channel with a space', ['whats app'], 'each of channels may contain only letters, digits'],
      ['a channel that is not a string', [42], 'each value in channels must be a string'],
      ['a string instead of a list', 'sms', 'channels must be an array'],
    ])('refuses %s (400), storing no key', async (_case, channels, error) => {
      const acme = await registerCompany(t.http, 'Acme');
      const response = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'Bad', scopes: ['messages:write'], channels }).expect(400);
      expect(response.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'channels', message: expect.stringContaining(error) })]));
      expect(await t.model<ApiKey>(ApiKey.name).countDocuments({ companyId: acme.companyId })).toBe(0);
    });
  });

  describe('posting', () => {
    let acme: Company;
    beforeAll(async () => {
      acme = await company('Acme');
    });

    it('takes inbound messages for its channels, in any case', async () => {
      const response = await receive(acme.whatsapp, { from: { phone: newPhone() }, text: 'Hi', channel: 'WHATSAPP' }).expect(201);
      expect(response.body.data.conversation.channel).toBe('whatsapp');
    });

    it.each([
      ['another channel', { channel: 'sms' }, 'sms'],
      ['no channel (the default api channel)', {}, 'api'],
    ])('refuses an inbound message on %s (403), storing nothing', async (_case, fields, channel) => {
      const before = await stored(acme);
      const response = await receive(acme.whatsapp, { from: { phone: newPhone() }, text: 'Hi', ...fields }).expect(403);
      expect(response.body).toEqual({ success: false, error: `This API key is limited to the channels whatsapp; not ${channel}` });
      expect(await stored(acme)).toEqual(before);
    });

    it('refuses an inbound media message on another channel before looking at the upload (403), which stays usable', async () => {
      const upload = await t.http
        .post('/api/external/media')
        .set('x-api-key', acme.whatsapp)
        .attach('file', Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1'), 'a.pdf')
        .expect(201);
      const before = await stored(acme);
      await receive(acme.whatsapp, { from: { phone: newPhone() }, mediaId: upload.body.data.id, channel: 'sms' }).expect(403);
      expect(await stored(acme)).toEqual(before);
      await receive(acme.whatsapp, { from: { phone: newPhone() }, mediaId: upload.body.data.id, channel: 'whatsapp' }).expect(201);
    });

    it('reports delivery statuses only of messages on its channels (403 for another, nothing changed)', async () => {
      const onSms = (await receive(acme.all, { from: { phone: newPhone() }, text: 'Hi', channel: 'sms' }).expect(201)).body.data.conversation.id;
      const onWhatsapp = (await receive(acme.all, { from: { phone: newPhone() }, text: 'Hi', channel: 'whatsapp' }).expect(201)).body.data.conversation.id;
      const reply = async (conversationId: string) =>
        (await t.http.post(`/v1/conversations/${conversationId}/messages`).set(acme.auth).send({ text: 'Hello' }).expect(201)).body.id as string;
      const [smsReply, whatsappReply] = [await reply(onSms), await reply(onWhatsapp)];

      const refused = await t.http.post(`/api/external/messages/${smsReply}/status`).set('x-api-key', acme.whatsapp).send({ status: 'delivered' }).expect(403);
      expect(refused.body).toEqual({ success: false, error: `This API key is limited to the channels whatsapp; message ${smsReply} is on sms` });
      const unchanged = await t.model<Message>(Message.name).findOne({ _id: smsReply, companyId: acme.companyId }).lean();
      expect(unchanged?.delivery?.status).toBe('pending');

      const moved = await t.http.post(`/api/external/messages/${whatsappReply}/status`).set('x-api-key', acme.whatsapp).send({ status: 'delivered' }).expect(200);
      expect(moved.body.data.delivery.status).toBe('delivered');
      await t.http.post(`/api/external/messages/${smsReply}/status`).set('x-api-key', acme.all).send({ status: 'sent' }).expect(200);
      // A missing message is a 404 before anything else.
      await t.http.post('/api/external/messages/6650f0c2a1b2c3d4e5f60718/status').set('x-api-key', acme.whatsapp).send({ status: 'sent' }).expect(404);
    });

    it('downloads the files of messages on its channels and its own uploads only (404 for the others)', async () => {
      const upload = async (key: string) =>
        (await t.http.post('/api/external/media').set('x-api-key', key).attach('file', Buffer.from('GIF89a\x01\x00\x01\x00\x00\x00\x00;', 'latin1'), 'a.gif').expect(201)).body.data
          .id as string;
      const [onSms, onWhatsapp, ownPending, othersPending] = [await upload(acme.all), await upload(acme.all), await upload(acme.whatsapp), await upload(acme.all)];
      await receive(acme.all, { from: { phone: newPhone() }, mediaId: onSms, channel: 'sms' }).expect(201);
      await receive(acme.all, { from: { phone: newPhone() }, mediaId: onWhatsapp, channel: 'whatsapp' }).expect(201);
      const get = (key: string, id: string) => t.http.get(`/api/external/media/${id}`).set('x-api-key', key);
      await get(acme.whatsapp, onWhatsapp).expect(200);
      await get(acme.whatsapp, ownPending).expect(200);
      for (const id of [onSms, othersPending]) {
        expect((await get(acme.whatsapp, id).expect(404)).body).toEqual({ success: false, error: `Media ${id} not found` });
        await get(acme.all, id).expect(200);
      }
    });
  });

  describe('reading events', () => {
    it('carries only the events of conversations on its channels in the list, with the cursor moving past the others', async () => {
      const acme = await company('Acme');
      for (const channel of ['sms', 'whatsapp', 'sms', 'sms', 'whatsapp', 'email']) {
        await receive(acme.all, { from: { phone: newPhone() }, text: `On ${channel}`, channel }).expect(201);
      }
      await settle(t);
      const page = (key: string, query: Record<string, string | number>) => t.http.get('/api/external/events').set('x-api-key', key).query(query).expect(200);

      const all = await page(acme.all, { limit: 100 });
      // Each message brings its contact's contact.created (filed under the message's channel), then its conversation's two.
      expect(all.body.data).toHaveLength(18);
      const whatsappIds = all.body.data
        .filter((_: unknown, index: number) => ['sms', 'whatsapp', 'sms', 'sms', 'whatsapp', 'email'][Math.floor(index / 3)] === 'whatsapp')
        .map((event: { id: string }) => event.id);
      expect(whatsappIds).toHaveLength(6);

      // Pages of 4: a full page, then a short one at the log's end, then an empty one (caught up) with the same cursor.
      const first = await page(acme.whatsapp, { limit: 4 });
      expect(first.body.data.map((event: { id: string }) => event.id)).toEqual(whatsappIds.slice(0, 4));
      const second = await page(acme.whatsapp, { limit: 4, after: first.body.nextCursor });
      expect(second.body.data.map((event: { id: string }) => event.id)).toEqual(whatsappIds.slice(4));
      expect(second.body.nextCursor).toBe(all.body.nextCursor);
      const caughtUp = await page(acme.whatsapp, { limit: 4, after: second.body.nextCursor });
      expect(caughtUp.body).toEqual({ success: true, data: [], nextCursor: second.body.nextCursor });
      // `types` and channels together.
      const received = await page(acme.whatsapp, { types: 'CHAT_RECEIVED' });
      expect(received.body.data.map((event: { type: string }) => event.type)).toEqual(['CHAT_RECEIVED', 'CHAT_RECEIVED']);

      // Events of other channels after the last one move the scoped cursor to the log's end too.
      await receive(acme.all, { from: { phone: newPhone() }, text: 'late', channel: 'sms' }).expect(201);
      await settle(t);
      const after = await page(acme.whatsapp, { after: second.body.nextCursor });
      expect(after.body.data).toEqual([]);
      expect(after.body.nextCursor).toBe((await page(acme.all, { after: all.body.nextCursor })).body.nextCursor);
    });

    it('files status changes and flow runs under their conversation’s channel', async () => {
      const acme = await company('Acme');
      const conversationId = (await receive(acme.all, { from: { phone: newPhone() }, text: 'Hi', channel: 'sms' }).expect(201)).body.data.conversation.id;
      const replyId = (await t.http.post(`/v1/conversations/${conversationId}/messages`).set(acme.auth).send({ text: 'Hello' }).expect(201)).body.id;
      await t.http.post(`/api/external/messages/${replyId}/status`).set('x-api-key', acme.all).send({ status: 'sent' }).expect(200);
      const flowId = (await t.http.post('/v1/flows').set(acme.auth).send({ name: 'Tag', steps: [{ type: 'add_tags', tags: ['seen'] }] }).expect(201)).body.id;
      await t.http.post(`/v1/flows/${flowId}/execute`).set(acme.auth).send({ conversationId }).expect(200);
      await settle(t);
      const logged = await t.app.get(EventLogRepository).range(acme.companyId, { after: 0 }, 100);
      expect(logged.map((event) => [event.type, event.channel])).toEqual([
        ['contact.created', 'sms'],
        ['conversation.created', 'sms'],
        ['message.received', 'sms'],
        ['message.sent', 'sms'],
        ['message.status_changed', 'sms'],
        ['conversation.updated', 'sms'],
        ['flow.executed', 'sms'],
      ]);
      const scoped = await t.http.get('/api/external/events').set('x-api-key', acme.whatsapp).expect(200);
      expect(scoped.body.data).toEqual([]);
    });

    it('streams only the events of conversations on its channels, live and when catching up', async () => {
      const acme = await company('Acme');
      const first = await receive(acme.all, { from: { phone: newPhone() }, text: 'before', channel: 'whatsapp' }).expect(201);
      await receive(acme.all, { from: { phone: newPhone() }, text: 'before', channel: 'sms' }).expect(201);
      await settle(t);
      // After the first contact's contact.created and conversation.created.
      const start = (await t.http.get('/api/external/events').set('x-api-key', acme.all).query({ limit: 2 }).expect(200)).body.nextCursor;

      const scoped = await clients.open(`${base}/api/external/events/stream?after=${start}`, { 'x-api-key': acme.whatsapp });
      const everything = await clients.open(`${base}/api/external/events/stream?after=${start}`, { 'x-api-key': acme.all });
      expect(scoped.status).toBe(200);
      await receive(acme.all, { from: { phone: newPhone() }, text: 'live', channel: 'sms' }).expect(201);
      await receive(acme.all, { from: { phone: newPhone() }, text: 'live', channel: 'whatsapp' }).expect(201);

      await everything.waitForEvents(10);
      await scoped.waitForEvents(4);
      // A contact event's channel is its contact's conversation's, as the stream shows it.
      const channels = (client: typeof scoped) => {
        const data = client.data.map((event) => event.data as { conversation?: { channel: string; contactId: string }; contact?: { id: string } });
        const byContact = new Map(data.filter((event) => event.conversation).map((event) => [event.conversation!.contactId, event.conversation!.channel]));
        return data.map((event) => event.conversation?.channel ?? byContact.get(event.contact!.id));
      };
      expect(channels(everything)).toEqual(['whatsapp', 'sms', 'sms', 'sms', 'sms', 'sms', 'sms', 'whatsapp', 'whatsapp', 'whatsapp']);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(channels(scoped)).toEqual(['whatsapp', 'whatsapp', 'whatsapp', 'whatsapp']);
      expect(scoped.data[0].data).toMatchObject({ message: { id: first.body.data.message.id } });
      // The frames' ids are the same cursors as the unscoped stream's.
      expect(scoped.events.map((event) => event.id)).toEqual(
        everything.events.filter((_, index) => channels(everything)[index] === 'whatsapp').map((event) => event.id),
      );
    });
  });

  describe('webhooks with channels', () => {
    it('are created and changed with channels on both interfaces; null on update widens to every channel', async () => {
      const acme = await company('Acme');
      const fromA = await t.http
        .post('/v1/webhooks')
        .set(acme.auth)
        .send({ url: receiver.url('/a'), events: ['message.received'], channels: ['SMS'] })
        .expect(201);
      expect(fromA.body.channels).toEqual(['sms']);
      const patchedA = await t.http.patch(`/v1/webhooks/${fromA.body.id}`).set(acme.auth).send({ channels: ['whatsapp', 'email'] }).expect(200);
      expect(patchedA.body.channels).toEqual(['whatsapp', 'email']);
      const widened = await t.http.patch(`/v1/webhooks/${fromA.body.id}`).set(acme.auth).send({ channels: null }).expect(200);
      expect(widened.body.channels).toBeNull();

      const external = t.http.post('/api/external/webhooks').set('x-api-key', acme.all);
      const fromB = await external.send({ name: 'WhatsApp', url: receiver.url('/b'), events: ['CHAT_SENT'], channels: ['whatsapp'] }).expect(201);
      expect(fromB.body.data.channels).toEqual(['whatsapp']);
      const patchedB = await t.http.patch(`/api/external/webhooks/${fromB.body.data.id}`).set('x-api-key', acme.all).send({ channels: ['sms'] }).expect(200);
      expect(patchedB.body.data.channels).toEqual(['sms']);
      const listed = await t.http.get('/api/external/webhooks').set('x-api-key', acme.all).expect(200);
      expect(listed.body.data.map((webhook: { channels: unknown }) => webhook.channels)).toEqual([['sms'], null]);

      const refused = await t.http.patch(`/api/external/webhooks/${fromB.body.data.id}`).set('x-api-key', acme.all).send({ channels: [] }).expect(400);
      expect(refused.body).toEqual({ success: false, error: 'channels must name at least one channel; leave it out for every channel' });
      const kept = await t.model<Webhook>(Webhook.name).findOne({ companyId: acme.companyId, url: receiver.url('/b') }).lean();
      expect(kept?.channels).toEqual(['sms']);
    });

    it('a key limited to channels creates webhooks only within them (its own list by default, a wider one 403)', async () => {
      const acme = await company('Acme');
      const create = (body: object) =>
        t.http.post('/api/external/webhooks').set('x-api-key', acme.whatsapp).send({ name: 'Mine', events: ['CHAT_RECEIVED'], ...body });
      const own = await create({ url: receiver.url('/limited/own') }).expect(201);
      expect(own.body.data.channels).toEqual(['whatsapp']);
      const explicit = await create({ url: receiver.url('/limited/explicit'), channels: ['WhatsApp'] }).expect(201);
      expect(explicit.body.data.channels).toEqual(['whatsapp']);
      for (const channels of [['sms'], ['whatsapp', 'sms'], null]) {
        const refused = await create({ url: receiver.url('/limited/wider'), channels }).expect(403);
        expect(refused.body).toEqual({
          success: false,
          error: 'This API key is limited to the channels whatsapp; its webhooks may not reach beyond them',
        });
      }
      const stored = await t.model<Webhook>(Webhook.name).find({ companyId: acme.companyId }).sort({ _id: 1 }).lean();
      expect(stored.map((webhook) => [webhook.url, webhook.channels])).toEqual([
        [receiver.url('/limited/own'), ['whatsapp']],
        [receiver.url('/limited/explicit'), ['whatsapp']],
      ]);

      // Its webhook receives WhatsApp traffic and not SMS.
      await receive(acme.all, { from: { phone: newPhone() }, text: 'On sms', channel: 'sms' }).expect(201);
      await receive(acme.all, { from: { phone: newPhone() }, text: 'On whatsapp', channel: 'whatsapp' }).expect(201);
      await settle(t);
      const [delivered] = await receiver.received('/limited/own', 1);
      expect(JSON.parse(delivered!.body).data.conversation.channel).toBe('whatsapp');
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.to('/limited/own')).toHaveLength(1);
    });

    it("a key limited to channels sees, edits and deletes only webhooks within them: the others' answer 404, unchanged", async () => {
      const acme = await company('Acme');
      const admin = (channels?: string[]) =>
        t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/admin'), events: ['message.received'], channels }).expect(201);
      const smsOnly = (await admin(['sms'])).body.id as string;
      const every = (await admin()).body.id as string;
      const mixed = (await admin(['whatsapp', 'sms'])).body.id as string;
      const whatsapp = (await admin(['whatsapp'])).body.id as string;
      const key = (request: import('supertest').Test) => request.set('x-api-key', acme.whatsapp);
      const before = await t.model<Webhook>(Webhook.name).find({ companyId: acme.companyId }).sort({ _id: 1 }).lean();

      const listed = await key(t.http.get('/api/external/webhooks')).expect(200);
      expect(listed.body.data.map((webhook: { id: string }) => webhook.id)).toEqual([whatsapp]);
      for (const id of [smsOnly, every, mixed]) {
        const notFound = { success: false, error: `Webhook ${id} not found` };
        expect((await key(t.http.get(`/api/external/webhooks/${id}`)).expect(404)).body).toEqual(notFound);
        expect((await key(t.http.patch(`/api/external/webhooks/${id}`)).send({ url: receiver.url('/stolen') }).expect(404)).body).toEqual(notFound);
        expect((await key(t.http.delete(`/api/external/webhooks/${id}`)).expect(404)).body).toEqual(notFound);
      }
      // Its own: widening refused, narrowing to its channel and changing the rest allowed.
      for (const channels of [['sms'], null]) {
        await key(t.http.patch(`/api/external/webhooks/${whatsapp}`)).send({ channels }).expect(403);
      }
      const after = await t.model<Webhook>(Webhook.name).find({ companyId: acme.companyId }).sort({ _id: 1 }).lean();
      expect(after).toEqual(before);

      await key(t.http.get(`/api/external/webhooks/${whatsapp}`)).expect(200);
      const renamed = await key(t.http.patch(`/api/external/webhooks/${whatsapp}`)).send({ name: 'Renamed' }).expect(200);
      expect(renamed.body.data).toMatchObject({ name: 'Renamed', channels: ['whatsapp'] });
      await key(t.http.delete(`/api/external/webhooks/${whatsapp}`)).expect(200);
      // The key of every channel still manages all of them.
      const all = await t.http.get('/api/external/webhooks').set('x-api-key', acme.all).expect(200);
      expect(all.body.data.map((webhook: { id: string }) => webhook.id)).toEqual([mixed, every, smsOnly]);
    });

    it('deliver only the events of conversations on their channels, and events of no conversation as before', async () => {
      const acme = await company('Acme');
      const hook = async (path: string, channels?: string[]) =>
        t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url(path), events: ['message.received', 'flow.executed'], channels }).expect(201);
      await hook('/scoped/sms', ['sms']);
      await hook('/scoped/whatsapp', ['whatsapp', 'email']);
      await hook('/scoped/all');

      for (const channel of ['sms', 'whatsapp', 'email', 'sms', 'web']) {
        await receive(acme.all, { from: { phone: newPhone() }, text: `On ${channel}`, channel }).expect(201);
      }
      // An extension's own event about no conversation.
      await t.app.get(EventPublisher).publish(acme.companyId, 'flow.executed', {
        execution: { executionId: 'ext-1', flowId: 'flow', conversationId: 'none', status: 'completed', steps: [] },
      });
      await settle(t);

      const channelsAt = async (path: string, count: number) => {
        const requests = await receiver.received(path, count);
        return requests.map((request) => {
          const body = JSON.parse(request.body) as { type: string; data: { conversation?: { channel: string } } };
          return body.data.conversation?.channel ?? body.type;
        });
      };
      expect(await channelsAt('/scoped/all', 6)).toEqual(['sms', 'whatsapp', 'email', 'sms', 'web', 'flow.executed']);
      expect(await channelsAt('/scoped/sms', 3)).toEqual(['sms', 'sms', 'flow.executed']);
      expect(await channelsAt('/scoped/whatsapp', 3)).toEqual(['whatsapp', 'email', 'flow.executed']);
      // Nothing more arrives for the scoped ones.
      await waitFor(() => receiver.to('/scoped/all').length === 6, { message: 'the unscoped deliveries' });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(receiver.to('/scoped/sms')).toHaveLength(3);
      expect(receiver.to('/scoped/whatsapp')).toHaveLength(3);
    });
  });
});
