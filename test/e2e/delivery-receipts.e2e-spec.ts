import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { REPORTED_STATUSES, type ReportedStatus } from '../../src/messages/delivery-status.js';
import { DELIVERY_STATUSES, Message, type DeliveryStatus } from '../../src/messages/message.schema.js';
import type { MessageView } from '../../src/messages/message.view.js';
import { EventRecorder, loggedEvent, settle } from '../support/event-log.js';
import { createApiKey, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** How a message reaches each status through reports (failed: from pending). */
const PATH_TO: Record<DeliveryStatus, ReportedStatus[]> = {
  pending: [],
  sent: ['sent'],
  delivered: ['sent', 'delivered'],
  read: ['sent', 'delivered', 'read'],
  failed: ['failed'],
};
const FORWARD: [DeliveryStatus, ReportedStatus][] = [
  ['pending', 'sent'],
  ['pending', 'delivered'],
  ['pending', 'read'],
  ['pending', 'failed'],
  ['sent', 'delivered'],
  ['sent', 'read'],
  ['sent', 'failed'],
  ['delivered', 'read'],
];
const REFUSED = DELIVERY_STATUSES.flatMap((from) =>
  REPORTED_STATUSES.filter((to) => !FORWARD.some(([f, t]) => f === from && t === to)).map((to) => [from, to] as [DeliveryStatus, ReportedStatus]),
);

describe('POST /api/external/messages/:id/status (delivery receipts)', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let acmeKey: string;
  let globexKey: string;
  let conversationId: string;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    acmeKey = await createApiKey(t.http, acme, ['messages:write', 'webhooks:manage']);
    globexKey = await createApiKey(t.http, globex, ['messages:write']);
    conversationId = (await inbound(acmeKey)).conversation.id;
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  async function inbound(key: string): Promise<{ message: MessageView; conversation: { id: string } }> {
    const response = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { email: uniqueEmail('contact') }, text: 'Hi' }).expect(201);
    return response.body.data;
  }

  async function reply(company = acme, conversation = conversationId): Promise<MessageView> {
    return (await t.http.post(`/v1/conversations/${conversation}/messages`).set(company.auth).send({ text: 'On its way' }).expect(201)).body;
  }

  const report = (id: string, body: object, key = acmeKey) => t.http.post(`/api/external/messages/${id}/status`).set('x-api-key', key).send(body);

  /** An agent reply moved to `status` through its reports; answers it as the last report did. */
  async function messageAt(status: DeliveryStatus): Promise<MessageView> {
    let message = await reply();
    for (const step of PATH_TO[status]) message = (await report(message.id, { status: step }).expect(200)).body.data;
    expect(message.delivery?.status).toBe(status);
    return message;
  }

  const stored = (id: string) => t.model<Message>(Message.name).findOne({ _id: id, companyId: acme.companyId }).lean();

  it('starts every outbound message at pending (agent replies, flow messages), inbound ones without delivery', async () => {
    const message = await reply();
    expect(message.delivery).toEqual({ status: 'pending', updatedAt: message.createdAt });
    const flow = await t.http.post('/v1/flows').set(acme.auth).send({ name: 'Say hi', steps: [{ type: 'send_message', text: 'Hi from the bot' }] }).expect(201);
    await t.http.post(`/v1/flows/${flow.body.id}/execute`).set(acme.auth).send({ conversationId }).expect(200);
    const listed = (await t.http.get(`/v1/conversations/${conversationId}/messages`).set(acme.auth).expect(200)).body.data as MessageView[];
    const fromFlow = listed.find((item) => item.text === 'Hi from the bot')!;
    expect(fromFlow.delivery).toEqual({ status: 'pending', updatedAt: fromFlow.createdAt });
    expect(listed.filter((item) => item.direction === 'inbound').map((item) => item.delivery)).toEqual([null]);
  });

  it.each(FORWARD)('moves %s → %s forward: 200 with the message, one message.status_changed', async (from, to) => {
    const before = await messageAt(from);
    await recorder.clear();
    const response = await report(before.id, { status: to }).expect(200);
    expect(response.body).toEqual({
      success: true,
      data: { ...before, delivery: { status: to, updatedAt: expect.any(String) } },
    });
    const updatedAt = Date.parse(response.body.data.delivery.updatedAt);
    expect(updatedAt).toBeGreaterThanOrEqual(Date.parse(before.delivery!.updatedAt));
    expect(updatedAt).toBeLessThanOrEqual(Date.now());
    const events = await recorder.events();
    expect(events).toEqual([
      loggedEvent('message.status_changed', acme.companyId, expect.any(Date), { message: response.body.data, previousStatus: from }),
    ]);
    const delivery = (await stored(before.id))?.delivery;
    expect(delivery).toMatchObject({ status: to, updatedAt: new Date(response.body.data.delivery.updatedAt) });
    // When it reached the recipient (the metrics' delivered time): set once, by delivered or by a read that skipped it.
    const deliveredAt = { sent: undefined, failed: undefined, delivered: delivery?.updatedAt, read: from === 'delivered' ? new Date(before.delivery!.updatedAt) : delivery?.updatedAt }[to];
    expect(delivery?.deliveredAt).toEqual(deliveredAt);
  });

  it.each(REFUSED)('refuses %s → %s: 200 with the message unchanged, nothing written, no event', async (from, to) => {
    const before = await messageAt(from);
    await recorder.clear();
    const storedBefore = await stored(before.id);
    const response = await report(before.id, { status: to, externalId: 'late', occurredAt: new Date().toISOString() }).expect(200);
    expect(response.body).toEqual({ success: true, data: before });
    expect(await stored(before.id)).toEqual(storedBefore);
    expect(await recorder.events()).toEqual([]);
  });

  it('lists twelve refused moves besides the eight forward ones', () => {
    expect(REFUSED).toHaveLength(12);
  });

  it('keeps the channel id from the report that gave it, and the error of a failure', async () => {
    const message = await reply();
    const sent = await report(message.id, { status: 'sent', externalId: 'wamid.ABC' }).expect(200);
    expect(sent.body.data.delivery).toEqual({ status: 'sent', updatedAt: expect.any(String), externalId: 'wamid.ABC' });
    const failed = await report(message.id, { status: 'failed', error: { code: '131026', message: 'Message undeliverable' } }).expect(200);
    expect(failed.body.data.delivery).toEqual({
      status: 'failed',
      updatedAt: expect.any(String),
      externalId: 'wamid.ABC',
      error: { code: '131026', message: 'Message undeliverable' },
    });
    const other = await reply();
    await report(other.id, { status: 'sent', externalId: 'first' }).expect(200);
    expect((await report(other.id, { status: 'delivered', externalId: 'second' }).expect(200)).body.data.delivery.externalId).toBe('second');
  });

  /** An agent reply sent a minute ago (the API stamps the current time; the raw collection can move it). */
  async function replySentAMinuteAgo(): Promise<MessageView & { createdAt: string }> {
    const message = await reply();
    const createdAt = new Date(Date.now() - 60_000);
    await t
      .model<Message>(Message.name)
      .collection.updateOne({ _id: new Types.ObjectId(message.id) }, { $set: { createdAt, 'delivery.updatedAt': createdAt } });
    return { ...message, createdAt: createdAt.toISOString() };
  }

  it('takes the time from occurredAt, kept in order: never before the previous status, never after now', async () => {
    const message = await replySentAMinuteAgo();
    const sentAt = new Date(Date.parse(message.createdAt) + 1500).toISOString();
    const sent = await report(message.id, { status: 'sent', occurredAt: sentAt }).expect(200);
    expect(sent.body.data.delivery.updatedAt).toBe(sentAt);
    // A channel clock behind ours: the delivery cannot precede the send it follows.
    const early = await report(message.id, { status: 'delivered', occurredAt: '2020-01-01T00:00:00Z' }).expect(200);
    expect(early.body.data.delivery.updatedAt).toBe(sentAt);
    // A channel clock a little ahead: now.
    const before = Date.now();
    const ahead = await report(message.id, { status: 'read', occurredAt: new Date(Date.now() + 60_000).toISOString() }).expect(200);
    expect(Date.parse(ahead.body.data.delivery.updatedAt)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(ahead.body.data.delivery.updatedAt)).toBeLessThanOrEqual(Date.now());
    // Epoch milliseconds are read too.
    const other = await replySentAMinuteAgo();
    const epoch = Date.parse(other.createdAt) + 2000;
    expect((await report(other.id, { status: 'sent', occurredAt: String(epoch) }).expect(200)).body.data.delivery.updatedAt).toBe(new Date(epoch).toISOString());
  });

  it('applies each move once under concurrent reports, in a chain of events ending at the furthest status', async () => {
    const message = await reply();
    const statuses: ReportedStatus[] = ['sent', 'delivered', 'read', 'sent', 'delivered', 'read', 'delivered', 'sent', 'read', 'sent'];
    const responses = await Promise.all(statuses.map((status) => report(message.id, { status })));
    expect(responses.map((response) => response.status)).toEqual(Array(statuses.length).fill(200));
    expect((await stored(message.id))?.delivery?.status).toBe('read');
    const events = (await recorder.events()).filter((event) => event.type === 'message.status_changed');
    const chain = events.map((event) => [event.data.previousStatus, event.data.message.delivery?.status]);
    expect(chain.length).toBeGreaterThanOrEqual(1);
    expect(chain.at(0)?.[0]).toBe('pending');
    expect(chain.at(-1)?.[1]).toBe('read');
    chain.slice(1).forEach(([previous], index) => expect(previous).toBe(chain[index][1]));
    expect(new Set(chain.map(([, status]) => status)).size).toBe(chain.length);
  });

  it('counts a message stored before receipts existed (no delivery) as pending since it was sent', async () => {
    const _id = new Types.ObjectId();
    const createdAt = new Date(Date.now() - 60_000);
    await t.model<Message>(Message.name).collection.insertOne({
      _id,
      companyId: new Types.ObjectId(acme.companyId),
      conversationId: new Types.ObjectId(conversationId),
      direction: 'outbound',
      type: 'text',
      text: 'from an older version',
      caption: null,
      media: null,
      senderType: 'agent',
      senderId: new Types.ObjectId(acme.agentId),
      createdAt,
      updatedAt: createdAt,
    });
    const listed = (await t.http.get(`/v1/conversations/${conversationId}/messages`).set(acme.auth).expect(200)).body.data as MessageView[];
    expect(listed.find((item) => item.id === _id.toHexString())?.delivery).toEqual({ status: 'pending', updatedAt: createdAt.toISOString() });
    const delivered = await report(_id.toHexString(), { status: 'delivered' }).expect(200);
    expect(delivered.body.data.delivery.status).toBe('delivered');
    expect((await recorder.events()).map((event) => [event.type, 'previousStatus' in event.data && event.data.previousStatus])).toEqual([
      ['message.status_changed', 'pending'],
    ]);
  });

  it('answers 404 in the envelope for an inbound message, an unknown or malformed id, and another company’s message', async () => {
    const received = await inbound(acmeKey);
    const theirs = await reply(globex, (await inbound(globexKey)).conversation.id);
    const cases = [received.message.id, new Types.ObjectId().toHexString(), 'not-an-id', theirs.id];
    for (const id of cases) {
      const response = await report(id, { status: 'delivered' });
      expect({ id, status: response.status, body: response.body }).toEqual({ id, status: 404, body: { success: false, error: `Message ${id} not found` } });
    }
    const theirsStored = await t.model<Message>(Message.name).findOne({ _id: theirs.id, companyId: globex.companyId }).lean();
    expect(theirsStored?.delivery?.status).toBe('pending');
    expect((await recorder.events()).filter((event) => event.type === 'message.status_changed')).toEqual([]);
  });

  it('answers 400 in the envelope for a bad report, changing nothing', async () => {
    const message = await reply();
    await recorder.clear();
    const cases: [object, string | RegExp][] = [
      [{}, /^status must be one of the following values: sent, delivered, read, failed/],
      [{ status: 'pending' }, 'status must be one of the following values: sent, delivered, read, failed'],
      [{ status: 'seen' }, 'status must be one of the following values: sent, delivered, read, failed'],
      [{ status: 'sent', error: { code: 'x', message: 'y' } }, 'error is allowed only with status failed'],
      [{ status: 'failed', error: { code: 'x' } }, /^error\.message must be/],
      [{ status: 'failed', error: 'broken' }, /error must be an object/],
      [{ status: 'sent', occurredAt: 'yesterday' }, 'occurredAt must be an ISO-8601 time with a zone (or a date), or epoch milliseconds'],
      [{ status: 'sent', occurredAt: new Date(Date.now() + 3_600_000).toISOString() }, 'occurredAt must not be in the future'],
      [{ status: 'sent', externalId: '' }, 'externalId must not be empty'],
      [{ status: 'sent', externalId: 'x'.repeat(256) }, 'externalId must be shorter than or equal to 255 characters'],
      [{ status: 'sent', channel: 'sms' }, 'channel is not a field of this body'],
      [{ status: { $gt: '' } }, /\$gt/],
    ];
    for (const [body, error] of cases) {
      const response = await report(message.id, body);
      expect({ body, status: response.status, success: response.body.success }).toEqual({ body, status: 400, success: false });
      if (typeof error === 'string') expect({ body, error: response.body.error }).toEqual({ body, error });
      else expect(response.body.error).toMatch(error);
    }
    expect((await stored(message.id))?.delivery?.status).toBe('pending');
    expect(await recorder.events()).toEqual([]);
  });

  it('answers 401 without a valid key and 403 without the messages:write scope', async () => {
    const message = await reply();
    expect((await t.http.post(`/api/external/messages/${message.id}/status`).send({ status: 'sent' }).expect(401)).body).toEqual({
      success: false,
      error: 'Missing API key (x-api-key header)',
    });
    const webhooksOnly = await createApiKey(t.http, acme, ['webhooks:manage']);
    expect((await report(message.id, { status: 'sent' }, webhooksOnly).expect(403)).body).toEqual({
      success: false,
      error: 'The API key lacks the scope messages:write',
    });
    expect((await stored(message.id))?.delivery?.status).toBe('pending');
  });

  it('delivers CHAT_STATUS_CHANGED to a webhook subscribed to it, and nothing to one that is not', async () => {
    const receiver = await WebhookReceiver.start();
    try {
      const subscribe = (path: string, events: string[]) =>
        t.http.post('/api/external/webhooks').set('x-api-key', acmeKey).send({ name: path, url: receiver.url(path), events }).expect(201);
      await subscribe('/receipts', ['CHAT_STATUS_CHANGED']);
      await subscribe('/sent-only', ['CHAT_SENT']);
      const message = await reply();
      const delivered = await report(message.id, { status: 'delivered', externalId: 'wamid.XYZ' }).expect(200);
      await report(message.id, { status: 'delivered' }).expect(200);
      const [request] = await receiver.received('/receipts', 1);
      const body = JSON.parse(request.body);
      expect(body).toEqual({
        id: expect.stringMatching(/^evt_/),
        type: 'CHAT_STATUS_CHANGED',
        timestamp: expect.any(String),
        companyId: acme.companyId,
        data: { message: delivered.body.data, previousStatus: 'pending' },
      });
      await receiver.received('/sent-only', 1);
      await settle(t);
      expect(receiver.to('/receipts')).toHaveLength(1);
      expect(receiver.to('/sent-only').map((sent) => JSON.parse(sent.body).type)).toEqual(['CHAT_SENT']);
    } finally {
      await receiver.close();
    }
  });

  it('lists message.status_changed in the event feed, under CHAT_STATUS_CHANGED on Interface B', async () => {
    const feedKey = await createApiKey(t.http, acme, ['events:read']);
    const dotted = (after?: string) => t.http.get('/v1/events').query({ types: 'message.status_changed', ...(after ? { after } : {}) }).set(acme.auth).expect(200);
    const external = (after: string) => t.http.get('/api/external/events').query({ types: 'CHAT_STATUS_CHANGED', after }).set('x-api-key', feedKey).expect(200);
    // The feed's end so far: the earlier tests' reports are before it.
    let end = (await dotted()).body.nextCursor as string;
    for (let page = await dotted(end); page.body.data.length > 0; page = await dotted(end)) end = page.body.nextCursor;
    const message = await reply();
    const read = await report(message.id, { status: 'read' }).expect(200);
    const expected = { data: { message: read.body.data, previousStatus: 'pending' } };
    await settle(t);
    expect((await dotted(end)).body.data).toEqual([expect.objectContaining({ type: 'message.status_changed', ...expected })]);
    expect((await external(end)).body.data).toEqual([expect.objectContaining({ type: 'CHAT_STATUS_CHANGED', ...expected })]);
  });

  it('is documented as an Interface B route with its envelope and errors', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const operation = document.paths['/api/external/messages/{id}/status'].post;
    expect(operation.security).toEqual([{ 'api-key': [] }]);
    expect(operation.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/DeliveryReportDto');
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '429']));
    expect([...document.components.schemas.MessageDeliveryView.properties.status.enum].sort()).toEqual([...DELIVERY_STATUSES].sort());
    // Nullable as strict OpenAPI 3.0 validators read it: the view or null.
    expect(document.components.schemas.MessageView.properties.delivery).toMatchObject({
      anyOf: [{ $ref: '#/components/schemas/MessageDeliveryView' }, { nullable: true, enum: [null] }],
    });
  });
});
