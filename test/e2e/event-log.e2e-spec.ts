import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { EventConsumerLane } from '../../src/events/consumers/event-consumer-lane.schema.js';
import { EventConsumers, MAX_CONSUMER_FAILURES, type EventConsumer } from '../../src/events/consumers/event-consumers.js';
import type { AnyDomainEvent } from '../../src/events/domain-events.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import { EventLogHead, LoggedEvent } from '../../src/events/event-log.schema.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { EventRelay } from '../../src/events/event-relay.js';
import { PENDING_EVENT_GRACE_MS, PendingEventSweep } from '../../src/events/pending-event-sweep.js';
import { LANE_FREE } from '../../src/lanes/lane.schema.js';
import type { Stored } from '../../src/database/tenancy/tenant-repository.js';
import { FlowExecution } from '../../src/flows/flow-execution.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

describe('the event log', () => {
  let engine: EmbeddedMongo;
  let t: TestApp;
  let other: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestCompany;
  let key: string;

  beforeAll(async () => {
    // Its own engine, with a TTL monitor quick enough to watch.
    engine = await startEmbeddedMongo({ ttlMonitorIntervalMs: 50 });
    receiver = await WebhookReceiver.start();
    const env = { MONGODB_URI: `${engine.uri}eventlog`, WEBHOOK_TIMEOUT_MS: '1000' };
    t = await createTestApp({ env });
    other = await createTestApp({ env });
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['messages:write']);
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    await t.close();
    await other.close();
    await receiver.close();
    await engine.stop();
  });

  const inbound = (text: string, from: Record<string, string> = { phone: '+14155550123' }, app = t) =>
    app.http.post('/api/external/messages').set('x-api-key', key).send({ from, text }).expect(201);

  const logOf = (company: TestCompany) =>
    t.model<LoggedEvent>(LoggedEvent.name).find({ companyId: company.companyId }).sort({ sequence: 1 }).lean();

  async function webhook(path: string, events: string[]): Promise<string> {
    const response = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url(path), events }).expect(201);
    return response.body.id;
  }

  it('writes each event with its change; a relay that never ran leaves them pending, and the sweep logs them once, with their ids', async () => {
    const hook = await webhook('/swept', ['CHAT_RECEIVED', 'CONVERSATION_CREATED']);
    await settle(t);
    // The process dies right after the write: nothing reaches the relay.
    jest.spyOn(t.app.get(EventRelay), 'enqueue').mockImplementation(() => undefined);
    const response = await inbound('Is anyone there?', { email: 'swept@example.test' });
    jest.restoreAllMocks();

    const messageId = response.body.data.message.id;
    const conversationId = response.body.data.conversation.id;
    // What message.received carries: the answer without its `duplicate` flag.
    const snapshots = { message: response.body.data.message, conversation: response.body.data.conversation };
    const message = await t.model<Message>(Message.name).findOne({ companyId: acme.companyId, _id: messageId }).lean();
    const conversation = await t.model<Conversation>(Conversation.name).findOne({ companyId: acme.companyId, _id: conversationId }).lean();
    expect(message?.pendingEvents).toEqual([expect.objectContaining({ type: 'message.received', data: snapshots })]);
    expect(conversation?.pendingEvents).toEqual([expect.objectContaining({ type: 'conversation.created' })]);
    const pendingIds = [conversation!.pendingEvents![0].id, message!.pendingEvents![0].id];
    expect(await t.app.get(EventLogRepository).byIds(acme.companyId, pendingIds)).toEqual([]);

    const sweep = t.app.get(PendingEventSweep);
    // Within the grace period the process that wrote them might still be relaying them.
    expect(await sweep.sweep(new Date())).toBe(0);
    const later = new Date(Date.now() + PENDING_EVENT_GRACE_MS);
    // The conversation's and the message's, and the new contact's contact.created.
    expect(await sweep.sweep(later)).toBe(3);
    expect(await sweep.sweep(later)).toBe(0);

    const logged = await t.app.get(EventLogRepository).byIds(acme.companyId, pendingIds);
    expect(logged.map((event) => [event.id, event.type])).toEqual([
      [pendingIds[0], 'conversation.created'],
      [pendingIds[1], 'message.received'],
    ]);
    expect(logged[1].data).toEqual(snapshots);
    const requests = await receiver.received('/swept', 2);
    expect(requests.map((request) => JSON.parse(request.body).id)).toEqual(pendingIds);
    expect((await t.model<Message>(Message.name).findOne({ companyId: acme.companyId, _id: messageId }).lean())?.pendingEvents).toEqual([]);
    await settle(t);
    expect(await t.model<WebhookDelivery>(WebhookDelivery.name).countDocuments({ companyId: acme.companyId, webhookId: hook.slice(3) })).toBe(2);
  });

  it('logs an event relayed again (a crash after the append, before the markers were cleared) once, and delivers it once, with one webhook-id', async () => {
    const hook = await webhook('/republished', ['CHAT_RECEIVED']);
    const response = await inbound('Republish me', { email: 'again@example.test' });
    const [first] = await receiver.received('/republished', 1);
    const eventId = JSON.parse(first.body).id as string;
    await settle(t);
    const before = (await logOf(acme)).length;

    // Put the logged event back on its message, as a process killed before clearing it would have left it.
    const messages = t.model<Message>(Message.name);
    const [logged] = await t.app.get(EventLogRepository).byIds(acme.companyId, [eventId]);
    await messages.updateOne(
      { companyId: acme.companyId, _id: response.body.data.message.id },
      { $push: { pendingEvents: { id: eventId, type: logged.type, occurredAt: new Date(0), data: logged.data } } },
    );
    expect(await t.app.get(PendingEventSweep).sweep(new Date())).toBe(1);
    await settle(t);

    expect(await logOf(acme)).toHaveLength(before);
    const deliveries = await t.model<WebhookDelivery>(WebhookDelivery.name).find({ companyId: acme.companyId, webhookId: hook.slice(3) }).lean();
    expect(deliveries.map((delivery) => delivery.eventId)).toEqual([eventId]);
    expect(receiver.to('/republished')).toHaveLength(1);
    expect(receiver.to('/republished')[0].headers['webhook-id']).toBe(`dlv_${deliveries[0]._id.toHexString()}`);
  });

  it('numbers each company’s events strictly in log order, across two API processes writing at once', async () => {
    const globex = await registerCompany(t.http, 'Globex');
    const globexKey = await createApiKey(t.http, globex, ['messages:write']);
    const send = (app: TestApp, apiKey: string, index: number) =>
      app.http.post('/api/external/messages').set('x-api-key', apiKey).send({ from: { email: `c${index % 7}@example.test` }, text: `#${index}` }).expect(201);
    await Promise.all(
      Array.from({ length: 40 }, (_, index) => send(index % 2 ? t : other, index % 3 ? key : globexKey, index)),
    );
    await settle(t, other);

    for (const company of [acme, globex]) {
      const log = await logOf(company);
      const sequences = log.map((event) => event.sequence);
      expect(new Set(sequences).size).toBe(sequences.length);
      expect(new Set(log.map((event) => event._id)).size).toBe(log.length);
      const head = await t.model<EventLogHead>(EventLogHead.name).findOne({ companyId: company.companyId }).lean();
      expect(head).toMatchObject({ logged: head?.sequence, leaseOwner: null });
      expect(sequences.at(-1)).toBeLessThanOrEqual(head!.sequence);
      // Each conversation's creation is logged before its messages.
      const createdAt = new Map(log.filter((event) => event.type === 'conversation.created').map((event) => [(event.data as { conversation: { id: string } }).conversation.id, event.sequence]));
      const outOfOrder = log
        .filter((entry) => entry.type === 'message.received')
        .filter((event) => (createdAt.get((event.data as { conversation: { id: string } }).conversation.id) ?? 0) > event.sequence)
        .map((event) => {
          const conversationId = (event.data as { conversation: { id: string } }).conversation.id;
          const created = log.find((entry) => entry.type === 'conversation.created' && (entry.data as { conversation: { id: string } }).conversation.id === conversationId);
          return { received: [event.sequence, event.loggedAt, event.occurredAt], created: [created?.sequence, created?.loggedAt, created?.occurredAt] };
        });
      expect(outOfOrder).toEqual([]);
    }
    const globexLog = await logOf(globex);
    expect(globexLog.filter((event) => event.type === 'message.received')).toHaveLength(14);
  });

  it('skips an event a consumer keeps failing on after its retries, records why, and goes on with the next', async () => {
    const handled: string[] = [];
    const consumer: EventConsumer = {
      name: 'test-poison',
      types: ['flow.executed'],
      retryBackoffMs: 1,
      handle: async (_companyId: string, events: AnyDomainEvent[]) => {
        for (const event of events) {
          if (event.type === 'flow.executed' && event.data.execution.executionId === 'poison') throw new Error('cannot handle this one');
          handled.push(event.id);
        }
      },
    };
    t.app.get(EventConsumers).register(consumer);
    const publish = (executionId: string) =>
      t.app.get(EventPublisher).publish(acme.companyId, 'flow.executed', {
        execution: { executionId, flowId: 'y', conversationId: 'z', status: 'completed', steps: [] },
      });
    await publish('poison');
    const good = await publish('fine');
    const lanes = t.model<EventConsumerLane>(EventConsumerLane.name);
    // MAX_CONSUMER_FAILURES turns, each found by the worker's poll.
    const lane = await waitFor(
      async () => {
        const current = await lanes.findOne({ companyId: acme.companyId, _id: `test-poison:${acme.companyId}` }).lean();
        return current && current.position >= good.sequence && current;
      },
      { timeoutMs: 15_000, message: 'the consumer to skip the poison event' },
    );
    expect(handled).toEqual([good.id]);
    expect(lane.lastError).toMatch(new RegExp(`^skipped evt_\\S+ after ${MAX_CONSUMER_FAILURES} failures: cannot handle this one$`));
    expect(lane.failures).toBe(0);
  });

  it('takes over a consumer whose worker died holding its lane, once the lease expires', async () => {
    const hook = await webhook('/taken-over', ['CHAT_RECEIVED']);
    await settle(t);
    const lanes = t.model<EventConsumerLane>(EventConsumerLane.name);
    const id = `webhooks:${acme.companyId}`;
    const leaseUntil = new Date(Date.now() + 700);
    await lanes.updateOne({ companyId: acme.companyId, _id: id }, { $set: { leaseOwner: 'worker-that-died/1/0', leaseUntil } });
    await inbound('Anyone?', { email: 'late@example.test' });
    const [request] = await receiver.received('/taken-over', 1);
    expect(request.at).toBeGreaterThanOrEqual(leaseUntil.getTime());
    await settle(t);
    expect(await lanes.findOne({ companyId: acme.companyId, _id: id }).lean()).toMatchObject({ leaseOwner: null, leaseUntil: LANE_FREE });
    expect(await t.model<WebhookDelivery>(WebhookDelivery.name).countDocuments({ companyId: acme.companyId, webhookId: hook.slice(3) })).toBe(1);
  });

  it('lets finished deliveries and flow runs expire after their retention, and keeps pending ones', async () => {
    const days = (date: Date | undefined, from: Date) => (date ? (date.getTime() - from.getTime()) / 86_400_000 : undefined);
    receiver.answer('/retained', { status: 500 }, { status: 200 });
    const hook = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/retained'), events: ['CHAT_RECEIVED'], retryConfig: { maxRetries: 3, backoffMs: 100 } }).expect(201);
    await inbound('Keep me a while', { email: 'retained@example.test' });
    const deliveries = t.model<WebhookDelivery>(WebhookDelivery.name);
    const filter = { companyId: acme.companyId, webhookId: hook.body.id.slice(3) };
    await receiver.received('/retained', 1);
    expect(await deliveries.findOne(filter).lean()).not.toHaveProperty('expireAt');
    await receiver.received('/retained', 2);
    const done = await waitFor(async () => {
      const delivery = await deliveries.findOne(filter).lean();
      return delivery?.status === 'succeeded' && delivery;
    });
    expect(days(done.expireAt, done.completedAt!)).toBe(30);
    // Queued again (and failing for a while), it is pending: nothing to expire.
    receiver.answer('/retained', { status: 500 }, { status: 500 }, { status: 500 });
    await t.http.post(`/v1/webhooks/${hook.body.id}/deliveries/dlv_${done._id.toHexString()}/retry`).set(acme.auth).expect(202);
    const requeued = await deliveries.findOne(filter).lean();
    expect(requeued?.status).toBe('pending');
    expect(requeued).not.toHaveProperty('expireAt');

    const flow = await t.http.post('/v1/flows').set(acme.auth).send({ name: 'Tag', steps: [{ type: 'add_tags', tags: ['kept'] }] }).expect(201);
    const conversation = (await inbound('Run a flow', { email: 'flow-retained@example.test' })).body.data.conversation.id;
    const run = await t.http.post(`/v1/flows/${flow.body.id}/execute`).set(acme.auth).send({ conversationId: conversation }).expect(200);
    const execution = await t.model<FlowExecution>(FlowExecution.name).findOne({ companyId: acme.companyId, _id: run.body.executionId }).lean<Stored<FlowExecution>>();
    expect(days(execution?.expireAt, execution!.updatedAt)).toBe(30);
  });

  it('keeps events EVENT_RETENTION_DAYS, then the TTL index removes them', async () => {
    const retention = await createTestApp({ env: { MONGODB_URI: `${engine.uri}retention`, EVENT_RETENTION_DAYS: '2' } });
    try {
      const company = await registerCompany(retention.http, 'Keeper');
      const event = await retention.app.get(EventPublisher).publish(company.companyId, 'flow.executed', {
        execution: { executionId: 'x', flowId: 'y', conversationId: 'z', status: 'completed', steps: [] },
      });
      const events = retention.model<LoggedEvent>(LoggedEvent.name);
      const stored = await events.findOne({ companyId: company.companyId, _id: event.id }).lean();
      expect(stored!.expireAt.getTime() - stored!.occurredAt.getTime()).toBe(2 * 86_400_000);
      await events.updateOne({ companyId: company.companyId, _id: event.id }, { $set: { expireAt: new Date(Date.now() - 1) } });
      await waitFor(async () => (await events.countDocuments({ companyId: company.companyId, _id: event.id })) === 0, {
        message: 'the TTL monitor to remove the expired event',
      });
    } finally {
      await retention.close();
    }
  });
});
