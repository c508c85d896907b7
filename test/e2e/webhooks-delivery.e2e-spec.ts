import type { ContactView } from '../../src/contacts/contact.view.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { Types } from 'mongoose';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { DOMAIN_EVENTS, EVENT_CATALOGUE, type AnyDomainEvent, type DomainEventData, type DomainEventName } from '../../src/events/domain-events.js';
import type { MessageView } from '../../src/messages/message.view.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { UnreadableSecretError } from '../../src/webhooks/webhook-secret-box.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';

const TIMEOUT_MS = 300;

/** What a receiver does with the documented algorithm (docs/webhooks.md). */
function signatureIsValid(secret: string, request: ReceivedRequest): boolean {
  const id = request.headers['webhook-id'] as string;
  const timestamp = request.headers['webhook-timestamp'] as string;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${request.body}`).digest();
  const [version, signature] = String(request.headers['webhook-signature']).split(',');
  const given = Buffer.from(signature ?? '', 'base64');
  return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
}

const hex = () => new Types.ObjectId().toHexString();
const now = () => new Date().toISOString();

function conversation(overrides: Partial<ConversationView> = {}): ConversationView {
  return {
    id: hex(),
    contactId: hex(),
    channel: 'whatsapp',
    status: 'bot',
    priority: 'medium',
    assignedAgentId: null,
    tags: [],
    subject: 'Order 1042',
    lastMessageAt: now(),
    firstResponseAt: null,
    queuedAt: null,
    closedAt: null,
    closeReason: null,
    snoozedUntil: null,
    replyWindowExpiresAt: null,
    sla: null,
    csat: null,
    createdAt: now(),
    updatedAt: now(),
    ...overrides,
  } as ConversationView;
}

function message(conversationId: string, overrides: Partial<MessageView> = {}): MessageView {
  return {
    id: hex(),
    conversationId,
    direction: 'inbound',
    type: 'text',
    text: 'Where is my order?',
    caption: null,
    media: null,
    template: null,
    senderType: 'contact',
    senderId: hex(),
    externalId: null,
    delivery: null,
    private: false,
    mentions: [],
    createdAt: now(),
    ...overrides,
  };
}

/** One realistic event of each kind, as the conversation, message and flow services publish them. */
function sampleEvents(): { [N in DomainEventName]: DomainEventData[N] } {
  const open = conversation();
  const agentId = hex();
  const at = now();
  const sampleContact = { id: hex(), name: 'Grace Hopper', email: 'grace@example.com', phone: null, tags: [], attributes: { plan: 'pro' }, createdAt: at, updatedAt: at };
  const assigned = conversation({ id: open.id, status: 'human', assignedAgentId: agentId });
  return {
    'conversation.created': { conversation: open },
    'conversation.assigned': { conversation: assigned, agentId, previousAgentId: null },
    'conversation.queued': { conversation: conversation({ id: open.id, status: 'queued', queuedAt: now() }), previousAgentId: null },
    'conversation.closed': { conversation: conversation({ id: open.id, status: 'closed', closedAt: now(), closeReason: 'resolved' }), reason: 'resolved' },
    'conversation.note_added': {
      message: message(open.id, { direction: 'internal', senderType: 'agent', senderId: agentId, text: 'VIP, be quick', private: true, mentions: [agentId] }),
      conversation: assigned,
      mentions: [agentId],
    },
    'conversation.snoozed': { conversation: conversation({ id: open.id, status: 'human', snoozedUntil: now() }) },
    'conversation.unsnoozed': { conversation: assigned, reason: 'timer' },
    'message.received': { message: message(open.id), conversation: open },
    'message.sent': { message: message(open.id, { direction: 'outbound', senderType: 'agent', senderId: agentId, text: 'On its way', delivery: { status: 'pending', updatedAt: now() } }), conversation: assigned },
    'message.status_changed': {
      message: message(open.id, { direction: 'outbound', senderType: 'agent', senderId: agentId, text: 'On its way', delivery: { status: 'delivered', updatedAt: now(), externalId: 'wamid.1' } }),
      previousStatus: 'sent',
    },
    'flow.executed': {
      execution: { executionId: hex(), flowId: hex(), conversationId: open.id, status: 'completed', steps: [{ type: 'send_message', status: 'completed' }] },
    },
    'conversation.transferred': { conversation: conversation({ id: open.id, status: 'queued', teamId: hex() }), from: { teamId: null, agentId }, to: { teamId: hex(), agentId: null } },
    'agent.status_changed': {
      agent: {
        id: agentId,
        name: 'Ada',
        email: 'ada@example.test',
        role: 'agent',
        status: 'away',
        isActive: true,
        capacity: null,
        capacityByChannel: {},
        skills: [],
        load: { total: 0, byChannel: {} },
        createdAt: now(),
        updatedAt: now(),
      },
      previousStatus: 'online',
      reason: 'idle',
    },
    'conversation.queue_timeout': { conversation: conversation({ id: open.id, status: 'closed', closeReason: 'queue_timeout' }), teamId: hex(), action: 'close' },
    'automation.applied': {
      run: { id: hex(), ruleId: hex(), conversationId: open.id, trigger: { event: 'message.received', eventId: 'evt_x' }, at: now(), outcome: 'applied', actions: [{ type: 'add_tags', status: 'ok' }] },
      conversation: open,
    },
    'conversation.reply_window_closing': { conversation: conversation({ id: open.id, channel: 'whatsapp', replyWindowExpiresAt: now() }), closesAt: now() },
    'template.status_changed': {
      template: {
        id: hex(),
        channel: 'whatsapp',
        name: 'order_shipped',
        language: 'en-US',
        category: 'utility',
        body: 'Hi {{1}}, your order {{2}} has shipped.',
        placeholderCount: 2,
        status: 'approved',
        rejectionReason: null,
        createdAt: now(),
        updatedAt: now(),
      },
      previousStatus: 'pending',
    },
    'conversation.priority_changed': { conversation: conversation({ id: open.id, priority: 'high' }), previousPriority: 'medium' },
    'sla.warning': { conversation: assigned, metric: 'first_response', dueAt: now(), policyId: hex() },
    'sla.breached': {
      conversation: conversation({
        id: open.id,
        sla: { policyId: hex(), firstResponseDueAt: now(), nextResponseDueAt: null, resolutionDueAt: null, breaches: ['first_response'] },
      }),
      metric: 'first_response',
      dueAt: now(),
      policyId: hex(),
    },
    'csat.submitted': {
      conversation: conversation({ id: open.id, status: 'closed', closedAt: now(), csat: { rating: 5, comment: 'Great', submittedAt: now() } }),
      rating: 5,
      comment: 'Great',
    },
    'contact.created': { contact: sampleContact },
    'contact.updated': { contact: { ...sampleContact, name: 'Grace B. Hopper' }, changes: { name: ['Grace Hopper', 'Grace B. Hopper'], 'attributes.plan': [null, 'pro'] } },
    'contact.deleted': { contactId: sampleContact.id },
    'conversation.updated': { conversation: conversation({ id: open.id, subject: 'Refund' }), changes: { subject: [null, 'Refund'] } },
    'contact.merged': { contact: contactView(), sourceIds: [hex()], mergeId: hex() },
    'contact.merge_undone': { mergeId: hex(), contact: contactView(), sourceIds: [hex()] },
    'contact.erased': { contactId: hex(), requestId: hex() },
    'privacy_request.completed': {
      request: {
        id: hex(),
        type: 'erase',
        contactId: hex(),
        status: 'completed',
        reason: null,
        includeNotes: false,
        dueAt: now(),
        failureReason: null,
        createdAt: now(),
        completedAt: now(),
      },
    },
  };
}

function contactView(): ContactView {
  return { id: hex(), name: 'Ada', email: 'ada@example.com', phone: '+14155550100', tags: ['vip'], attributes: {}, createdAt: now(), updatedAt: now() };
}

describe('webhook delivery', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestCompany;
  let bus: EventPublisher;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) } });
    bus = t.app.get(EventPublisher);
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  async function webhook(path: string, body: Record<string, unknown>, company = acme): Promise<{ id: string; secret: string }> {
    const response = await t.http.post('/v1/webhooks').set(company.auth).send({ url: receiver.url(path), ...body }).expect(201);
    return response.body;
  }

  const deliveriesOf = (id: string, company = acme) =>
    t.model<WebhookDelivery>(WebhookDelivery.name).find({ companyId: company.companyId, webhookId: id.slice(3) }).sort({ sequence: 1 }).lean();

  async function deliveryLog(id: string, query = '') {
    return (await t.http.get(`/v1/webhooks/${id}/deliveries${query}`).set(acme.auth).expect(200)).body;
  }

  it('delivers each event of the catalogue, signed, under the name subscribed with, in event order', async () => {
    const dotted = await webhook('/all-dotted', { events: DOMAIN_EVENTS });
    const external = await webhook('/all-external', { events: Object.values(EVENT_CATALOGUE) });
    const samples = sampleEvents();
    const published: AnyDomainEvent[] = [];
    for (const name of DOMAIN_EVENTS) {
      published.push((await bus.publish(acme.companyId, name, samples[name] as never)) as AnyDomainEvent);
    }

    for (const [path, secret, names] of [
      ['/all-dotted', dotted.secret, published.map((event) => event.type)],
      ['/all-external', external.secret, published.map((event) => EVENT_CATALOGUE[event.type])],
    ] as const) {
      const requests = await receiver.received(path, DOMAIN_EVENTS.length);
      expect(requests).toHaveLength(DOMAIN_EVENTS.length);
      requests.forEach((request, index) => {
        const event = published[index];
        expect(request.method).toBe('POST');
        expect(request.headers['content-type']).toBe('application/json');
        expect(request.headers['user-agent']).toMatch(/^Parley-Webhooks\//);
        expect(request.headers['webhook-id']).toMatch(/^dlv_[0-9a-f]{24}$/);
        expect(Math.abs(Number(request.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
        expect(signatureIsValid(secret, request)).toBe(true);
        expect(JSON.parse(request.body)).toEqual({
          id: event.id,
          type: names[index],
          timestamp: event.occurredAt.toISOString(),
          companyId: acme.companyId,
          data: JSON.parse(JSON.stringify(event.data)),
        });
      });
      expect(signatureIsValid(dotted.secret === secret ? external.secret : dotted.secret, requests[0])).toBe(false);
    }
    const first = (path: string) => receiver.to(path)[0];
    expect(JSON.parse(first('/all-dotted').body).id).toBe(JSON.parse(first('/all-external').body).id);
    expect(first('/all-dotted').headers['webhook-id']).not.toBe(first('/all-external').headers['webhook-id']);

    const log = await waitFor(async () => {
      const page = await deliveryLog(dotted.id);
      return page.data.every((delivery: { status: string }) => delivery.status === 'succeeded') && page;
    });
    expect(log.data).toHaveLength(DOMAIN_EVENTS.length);
    expect(log.data[0]).toMatchObject({
      id: expect.stringMatching(/^dlv_[0-9a-f]{24}$/),
      webhookId: dotted.id,
      eventId: published.at(-1)!.id,
      type: published.at(-1)!.type,
      status: 'succeeded',
      attemptCount: 1,
      attempts: [{ at: expect.any(String), statusCode: 200, durationMs: expect.any(Number), error: null }],
      nextAttemptAt: null,
      completedAt: expect.any(String),
    });
    expect(log.data.at(-1).id).toBe(first('/all-dotted').headers['webhook-id']);
  });

  it('delivers what the real API does: an inbound message, an agent reply, a close', async () => {
    const key = await createApiKey(t.http, acme, ['webhooks:manage', 'messages:write']);
    const created = await t.http
      .post('/api/external/webhooks')
      .set('x-api-key', key)
      .send({ name: 'Connector', url: receiver.url('/real-api'), events: ['CHAT_RECEIVED', 'CHAT_SENT', 'CONVERSATION_CREATED', 'conversation.closed'] })
      .expect(201);
    const { id, secret } = created.body.data;

    const inbound = await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: '+14155552671', name: 'Grace Hopper' }, text: 'Where is my order?' })
      .expect(201);
    // Fanned out from the event log once the API answered, in log order.
    await settle(t);
    expect((await deliveriesOf(id)).map((delivery) => delivery.type)).toEqual(['CONVERSATION_CREATED', 'CHAT_RECEIVED']);
    const conversationId = inbound.body.data.conversation.id as string;
    const reply = await t.http.post(`/v1/conversations/${conversationId}/messages`).set(acme.auth).send({ text: 'On its way' }).expect(201);
    await t.http.post(`/v1/conversations/${conversationId}/close`).set(acme.auth).send({ reason: 'resolved' }).expect(200);

    const requests = await receiver.received('/real-api', 4);
    const bodies = requests.map((request) => JSON.parse(request.body));
    expect(bodies.map((body) => body.type)).toEqual(['CONVERSATION_CREATED', 'CHAT_RECEIVED', 'CHAT_SENT', 'conversation.closed']);
    requests.forEach((request) => expect(signatureIsValid(secret, request)).toBe(true));
    expect(bodies[0].data.conversation.id).toBe(conversationId);
    expect(bodies[1].data.message).toEqual(inbound.body.data.message);
    expect(bodies[1].data.message).toMatchObject({ direction: 'inbound', text: 'Where is my order?' });
    expect(bodies[2].data.message).toEqual(reply.body);
    expect(bodies[3].data).toMatchObject({ conversation: { id: conversationId, status: 'closed' }, reason: 'resolved' });
    expect(bodies.every((body) => body.companyId === acme.companyId)).toBe(true);
  });

  it('writes one delivery per event, numbered by the event log', async () => {
    const hook = await webhook('/outbox', { events: ['message.received'], isActive: true });
    const samples = sampleEvents();
    const event = await bus.publish(acme.companyId, 'message.received', samples['message.received']);
    const [delivery] = await waitFor(async () => (await deliveriesOf(hook.id)).length === 1 && deliveriesOf(hook.id));
    expect(delivery).toMatchObject({ eventId: event.id, type: 'message.received', sequence: event.sequence });
    expect(JSON.parse(delivery.payload)).toMatchObject({ id: event.id, type: 'message.received', companyId: acme.companyId });
    await receiver.received('/outbox', 1);
  });

  it('records nothing for webhooks not subscribed, paused, or of another company', async () => {
    const other = await registerCompany(t.http, 'Other');
    const unsubscribed = await webhook('/quiet-unsubscribed', { events: ['message.sent', 'CONVERSATION_CLOSED'] });
    const paused = await webhook('/quiet-paused', { events: ['message.received'], isActive: false });
    const foreign = await webhook('/quiet-foreign', { events: ['message.received'] }, other);
    await webhook('/quiet-control', { events: ['CHAT_RECEIVED'] });
    await bus.publish(acme.companyId, 'message.received', sampleEvents()['message.received']);

    expect(await deliveriesOf(unsubscribed.id)).toHaveLength(0);
    expect(await deliveriesOf(paused.id)).toHaveLength(0);
    expect(await deliveriesOf(foreign.id, other)).toHaveLength(0);
    await receiver.received('/quiet-control', 1);
    expect(receiver.to('/quiet-unsubscribed')).toHaveLength(0);
    expect(receiver.to('/quiet-paused')).toHaveLength(0);
    expect(receiver.to('/quiet-foreign')).toHaveLength(0);
  });

  it('makes one delivery when a webhook lists both forms of an event, under the first', async () => {
    const hook = await webhook('/both-forms', { events: ['CHAT_SENT', 'message.sent'] });
    await bus.publish(acme.companyId, 'message.sent', sampleEvents()['message.sent']);
    await settle(t);
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
    const [request] = await receiver.received('/both-forms', 1);
    expect(JSON.parse(request.body).type).toBe('CHAT_SENT');
  });

  it('retries on the backoff schedule with the same webhook-id, then marks the delivery failed', async () => {
    receiver.answer('/retries', { status: 500, body: 'database   is\ndown' });
    const hook = await webhook('/retries', { events: ['flow.executed'], retryConfig: { maxRetries: 3, backoffMs: 100 } });
    await bus.publish(acme.companyId, 'flow.executed', sampleEvents()['flow.executed']);

    const [delivery] = await waitFor(async () => {
      const rows = await deliveriesOf(hook.id);
      return rows[0]?.status === 'failed' && rows;
    });
    const requests = receiver.to('/retries');
    expect(requests).toHaveLength(4);
    expect(new Set(requests.map((request) => request.headers['webhook-id']))).toEqual(new Set([`dlv_${delivery._id.toHexString()}`]));
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    requests.forEach((request) => expect(signatureIsValid(hook.secret, request)).toBe(true));
    const gaps = requests.slice(1).map((request, index) => request.at - requests[index].at);
    [100, 200, 400].forEach((backoff, index) => {
      expect(gaps[index]).toBeGreaterThanOrEqual(backoff);
      expect(gaps[index]).toBeLessThan(backoff + 1000);
    });

    const [logged] = (await deliveryLog(hook.id, '?status=failed')).data;
    expect(logged).toMatchObject({ status: 'failed', attemptCount: 4, nextAttemptAt: null, completedAt: expect.any(String) });
    expect(logged.attempts).toHaveLength(4);
    for (const attempt of logged.attempts) {
      expect(attempt).toEqual({ at: expect.any(String), statusCode: 500, durationMs: expect.any(Number), error: 'HTTP 500: database is down' });
    }
    expect((await deliveryLog(hook.id, '?status=pending')).data).toHaveLength(0);
  });

  it('never lets a slow endpoint hold up another webhook', async () => {
    // Under WEBHOOK_TIMEOUT_MS (300): slow, but every attempt succeeds.
    receiver.answer('/slowpoke', { status: 200, delayMs: 250 });
    await webhook('/slowpoke', { events: ['message.received'] });
    await webhook('/speedy', { events: ['message.received'] });
    for (let index = 0; index < 5; index += 1) {
      await bus.publish(acme.companyId, 'message.received', sampleEvents()['message.received']);
    }
    const speedy = await receiver.received('/speedy', 5);
    expect(receiver.to('/slowpoke').length).toBeLessThan(5);
    const slow = await receiver.received('/slowpoke', 5);
    expect(speedy[4].at).toBeLessThan(slow[4].at);
    // One at a time: each request to the slow endpoint starts after the previous answer.
    slow.slice(1).forEach((request, index) => expect(request.at - slow[index].at).toBeGreaterThanOrEqual(250));
  });

  it('counts a receiver that does not answer within the timeout as a failure', async () => {
    receiver.answer('/slow', { status: 200, delayMs: 5 * TIMEOUT_MS }, { status: 204 });
    const hook = await webhook('/slow', { events: ['conversation.closed'], retryConfig: { maxRetries: 1, backoffMs: 100 } });
    await bus.publish(acme.companyId, 'conversation.closed', sampleEvents()['conversation.closed']);
    const delivery = await waitFor(async () => (await deliveriesOf(hook.id)).find((row) => row.status === 'succeeded'));
    expect(delivery.attempts).toHaveLength(2);
    expect(delivery.attempts[0]).toMatchObject({ statusCode: null, error: `Timed out after ${TIMEOUT_MS} ms` });
    expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(TIMEOUT_MS - 5);
    expect(delivery.attempts[0].durationMs).toBeLessThan(5 * TIMEOUT_MS);
    expect(delivery.attempts[1]).toMatchObject({ statusCode: 204, error: null });
  });

  it('does not follow redirects: a 3xx is a failure', async () => {
    receiver.answer('/redirect', { status: 302, headers: { location: receiver.url('/redirect-target') } });
    const hook = await webhook('/redirect', { events: ['conversation.created'], retryConfig: { maxRetries: 0 } });
    await bus.publish(acme.companyId, 'conversation.created', sampleEvents()['conversation.created']);
    const delivery = await waitFor(async () => (await deliveriesOf(hook.id)).find((row) => row.status === 'failed'));
    expect(delivery.attempts).toEqual([expect.objectContaining({ statusCode: 302, error: 'HTTP 302: redirects are not followed' })]);
    expect(receiver.to('/redirect-target')).toHaveLength(0);
  });

  it('records an unreadable signing secret as an error on every attempt, and sends nothing', async () => {
    const hook = await webhook('/unreadable-secret', { events: ['flow.executed'], retryConfig: { maxRetries: 0 } });
    // Sealed with another key (JWT_SECRET rotated, say): it cannot be decrypted.
    await t
      .model<Webhook>(Webhook.name)
      .updateOne({ companyId: acme.companyId, _id: hook.id.slice(3) }, { $set: { secret: 'v1.c2VhbGVk.ZWxzZXdoZXJl.eA' } });
    await bus.publish(acme.companyId, 'flow.executed', sampleEvents()['flow.executed']);
    await bus.publish(acme.companyId, 'flow.executed', sampleEvents()['flow.executed']);

    const failed = await waitFor(async () => {
      const { data } = await deliveryLog(hook.id, '?status=failed');
      return data.length === 2 && data;
    });
    for (const delivery of failed) {
      expect(delivery).toMatchObject({ status: 'failed', attemptCount: 1 });
      expect(delivery.attempts).toEqual([
        { at: expect.any(String), statusCode: null, durationMs: 0, error: new UnreadableSecretError('sealed under JWT_SECRET, which has changed since').message },
      ]);
    }
    expect(receiver.to('/unreadable-secret')).toHaveLength(0);
  });

  it('disables the webhook on 410 Gone and records nothing for it afterwards', async () => {
    receiver.answer('/gone', { status: 410 });
    const hook = await webhook('/gone', { events: ['message.received'], retryConfig: { maxRetries: 5, backoffMs: 100 } });
    await bus.publish(acme.companyId, 'message.received', sampleEvents()['message.received']);
    const disabled = await waitFor(async () => {
      const response = await t.http.get(`/v1/webhooks/${hook.id}`).set(acme.auth).expect(200);
      return response.body.isActive === false && response.body;
    });
    expect(disabled.disabledReason).toMatch(/^The receiver answered 410 Gone on /);
    const [delivery] = await deliveriesOf(hook.id);
    expect(delivery).toMatchObject({ status: 'failed', attemptCount: 1, nextAttemptAt: null });

    await bus.publish(acme.companyId, 'message.received', sampleEvents()['message.received']);
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
    const resumed = await t.http.patch(`/v1/webhooks/${hook.id}`).set(acme.auth).send({ isActive: true }).expect(200);
    expect(resumed.body).toMatchObject({ isActive: true, disabledReason: null });
  });

  it('honours Retry-After on 503 and 429 instead of the backoff', async () => {
    receiver.answer('/retry-after', { status: 503, headers: { 'retry-after': '0' } }, { status: 429, headers: { 'retry-after': '1' } }, { status: 200 });
    const hook = await webhook('/retry-after', { events: ['message.sent'], retryConfig: { maxRetries: 3, backoffMs: 60_000 } });
    await bus.publish(acme.companyId, 'message.sent', sampleEvents()['message.sent']);
    const requests = await receiver.received('/retry-after', 3, 4000);
    expect(requests[1].at - requests[0].at).toBeLessThan(1000);
    expect(requests[2].at - requests[1].at).toBeGreaterThanOrEqual(1000);
    const delivery = await waitFor(async () => (await deliveriesOf(hook.id)).find((row) => row.status === 'succeeded'));
    expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual([503, 429, 200]);
  });

  it('redelivers one delivery on request, with the same webhook-id and a fresh round of retries', async () => {
    receiver.answer('/redeliver', { status: 500 }, { status: 200 });
    const hook = await webhook('/redeliver', { events: ['flow.executed'], retryConfig: { maxRetries: 0 } });
    await bus.publish(acme.companyId, 'flow.executed', sampleEvents()['flow.executed']);
    const failed = await waitFor(async () => (await deliveriesOf(hook.id)).find((row) => row.status === 'failed'));
    const id = `dlv_${failed._id.toHexString()}`;

    const retried = await t.http.post(`/v1/webhooks/${hook.id}/deliveries/${id}/retry`).set(acme.auth).expect(202);
    expect(retried.body).toMatchObject({ id, status: 'pending', attemptCount: 0, nextAttemptAt: expect.any(String), completedAt: null });
    const requests = await receiver.received('/redeliver', 2);
    expect(requests[1].headers['webhook-id']).toBe(id);
    expect(requests[1].body).toBe(requests[0].body);
    expect(signatureIsValid(hook.secret, requests[1])).toBe(true);
    const done = await waitFor(async () => (await deliveriesOf(hook.id)).find((row) => row.status === 'succeeded'));
    expect(done.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 200]);

    // A succeeded delivery can be redelivered too: same webhook-id, attemptCount counted again from 0.
    const again = await t.http.post(`/v1/webhooks/${hook.id}/deliveries/${id}/retry`).set(acme.auth).expect(202);
    expect(again.body).toMatchObject({ id, status: 'pending', attemptCount: 0, completedAt: null });
    const [original, , redelivered] = await receiver.received('/redeliver', 3);
    expect(redelivered.headers['webhook-id']).toBe(original.headers['webhook-id']);
    expect(redelivered.headers['webhook-id']).toBe(id);
    const logged = await waitFor(async () => {
      const [row] = (await deliveryLog(hook.id)).data;
      return row?.status === 'succeeded' && row;
    });
    expect(logged).toMatchObject({ id, status: 'succeeded', attemptCount: 1, nextAttemptAt: null, completedAt: expect.any(String) });
    expect(logged.attempts.map((attempt: { statusCode: number | null }) => attempt.statusCode)).toEqual([500, 200, 200]);
  });

  it('recovers the failed deliveries created since a time, and only those', async () => {
    receiver.answer('/recover', { status: 500 });
    const hook = await webhook('/recover', { events: ['conversation.assigned'], retryConfig: { maxRetries: 0 } });
    await bus.publish(acme.companyId, 'conversation.assigned', sampleEvents()['conversation.assigned']);
    await waitFor(async () => (await deliveriesOf(hook.id))[0]?.status === 'failed');
    await new Promise((resolve) => setTimeout(resolve, 5));
    const since = new Date().toISOString();
    await bus.publish(acme.companyId, 'conversation.assigned', sampleEvents()['conversation.assigned']);
    await waitFor(async () => (await deliveriesOf(hook.id))[1]?.status === 'failed');

    receiver.answer('/recover', { status: 200 });
    const recovered = await t.http.post(`/v1/webhooks/${hook.id}/recover`).set(acme.auth).send({ since }).expect(202);
    expect(recovered.body).toEqual({ requeued: 1 });
    await waitFor(async () => (await deliveriesOf(hook.id))[1]?.status === 'succeeded');
    const [older, newer] = await deliveriesOf(hook.id);
    expect(older.status).toBe('failed');
    expect(receiver.to('/recover').map((request) => request.headers['webhook-id'])).toEqual([
      `dlv_${older._id.toHexString()}`,
      `dlv_${newer._id.toHexString()}`,
      `dlv_${newer._id.toHexString()}`,
    ]);
    const again = await t.http.post(`/v1/webhooks/${hook.id}/recover`).set(acme.auth).send({ since }).expect(202);
    expect(again.body).toEqual({ requeued: 0 });
  });

  it('on delete, discards pending deliveries and does not retry the attempt in flight', async () => {
    receiver.answer('/delete-me', { status: 500, delayMs: 200 });
    receiver.answer('/delete-control', { status: 500 });
    const doomed = await webhook('/delete-me', { events: ['CHAT_RECEIVED'], retryConfig: { maxRetries: 5, backoffMs: 100 } });
    await webhook('/delete-control', { events: ['CHAT_RECEIVED'], retryConfig: { maxRetries: 5, backoffMs: 100 } });
    await bus.publish(acme.companyId, 'message.received', sampleEvents()['message.received']);
    await bus.publish(acme.companyId, 'message.received', sampleEvents()['message.received']);
    await receiver.received('/delete-me', 1);

    await t.http.delete(`/v1/webhooks/${doomed.id}`).set(acme.auth).expect(200);
    expect(await deliveriesOf(doomed.id)).toHaveLength(0);
    // The control webhook's 4th attempt comes 700 ms after its first: the deleted one's retry would have come after 300.
    await receiver.received('/delete-control', 4);
    expect(receiver.to('/delete-me')).toHaveLength(1);
    expect(await deliveriesOf(doomed.id)).toHaveLength(0);
  });

  it('attempts nothing while paused, records no new events, and delivers the pending ones on resume', async () => {
    receiver.answer('/pause', { status: 500 }, { status: 200 });
    receiver.answer('/pause-control', { status: 500 });
    const hook = await webhook('/pause', { events: ['conversation.created'], retryConfig: { maxRetries: 5, backoffMs: 300 } });
    await webhook('/pause-control', { events: ['conversation.created'], retryConfig: { maxRetries: 5, backoffMs: 100 } });
    const before = await bus.publish(acme.companyId, 'conversation.created', sampleEvents()['conversation.created']);
    await receiver.received('/pause', 1);
    await t.http.patch(`/v1/webhooks/${hook.id}`).set(acme.auth).send({ isActive: false }).expect(200);
    await bus.publish(acme.companyId, 'conversation.created', sampleEvents()['conversation.created']);

    // The control's 4th attempt comes 700 ms after its first: the paused webhook's retry was due after 300.
    await receiver.received('/pause-control', 4);
    expect(receiver.to('/pause')).toHaveLength(1);
    const [pending, ...rest] = await deliveriesOf(hook.id);
    expect(rest).toHaveLength(0);
    expect(pending).toMatchObject({ status: 'pending', attemptCount: 1 });
    expect(pending.nextAttemptAt!.getTime()).toBeLessThan(Date.now());

    await t.http.patch(`/v1/webhooks/${hook.id}`).set(acme.auth).send({ isActive: true }).expect(200);
    const [, resumed] = await receiver.received('/pause', 2);
    expect(JSON.parse(resumed.body).id).toBe(before.id);
    await waitFor(async () => (await deliveriesOf(hook.id))[0]?.status === 'succeeded');
  });

  it('keeps delivery logs apart between companies', async () => {
    const other = await registerCompany(t.http, 'Nosy');
    const hook = await webhook('/private-log', { events: ['flow.executed'] });
    await bus.publish(acme.companyId, 'flow.executed', sampleEvents()['flow.executed']);
    await receiver.received('/private-log', 1);
    const [delivery] = await deliveriesOf(hook.id);
    const deliveryId = `dlv_${delivery._id.toHexString()}`;
    await t.http.get(`/v1/webhooks/${hook.id}/deliveries`).set(other.auth).expect(404);
    await t.http.post(`/v1/webhooks/${hook.id}/deliveries/${deliveryId}/retry`).set(other.auth).expect(404);
    const otherHook = await webhook('/private-log-other', { events: ['flow.executed'] }, other);
    const crossed = await t.http.post(`/v1/webhooks/${otherHook.id}/deliveries/${deliveryId}/retry`).set(other.auth).expect(404);
    expect(crossed.body.message).toBe(`Delivery ${deliveryId} not found`);
  });
});
