import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, ObjectId } from 'mongodb';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const TIMEOUT_MS = 500;

function conversationCreated(index: number): { conversation: ConversationView } {
  const at = new Date().toISOString();
  const conversation: Partial<ConversationView> = {
    id: new ObjectId().toHexString(),
    contactId: new ObjectId().toHexString(),
    channel: 'sms',
    status: 'bot',
    priority: 'medium',
    assignedAgentId: null,
    tags: [],
    subject: `Conversation ${index}`,
    lastMessageAt: at,
    firstResponseAt: null,
    queuedAt: null,
    closedAt: null,
    closeReason: null,
    sla: null,
    csat: null,
    createdAt: at,
    updatedAt: at,
  };
  return { conversation: conversation as ConversationView };
}

describe('two API processes on one database', () => {
  let engine: EmbeddedMongo;
  let receiver: WebhookReceiver;
  let a: TestApp;
  let b: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    receiver = await WebhookReceiver.start();
    const env = { MONGODB_URI: `${engine.uri}shared`, WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS) };
    a = await createTestApp({ env });
    b = await createTestApp({ env });
    acme = await registerCompany(a.http, 'Acme');
  });
  afterAll(async () => {
    await a.close();
    await b.close();
    await receiver.close();
    await engine.stop();
  });

  const deliveriesOf = (app: TestApp, id: string) =>
    app.model<WebhookDelivery>(WebhookDelivery.name).find({ companyId: acme.companyId, webhookId: id.slice(3) }).sort({ sequence: 1 }).lean();

  it('delivers each event exactly once per attempt, in event order, whichever process published it', async () => {
    const count = 12;
    // Each delivery fails once, then succeeds: two workers attempting one webhook at once would break the alternation.
    receiver.answer('/shared', ...Array.from({ length: 2 * count }, (_, index) => ({ status: index % 2 === 0 ? 500 : 200 })));
    const created = await b.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: receiver.url('/shared'), events: ['CONVERSATION_CREATED'], retryConfig: { maxRetries: 2, backoffMs: 100 } })
      .expect(201);
    const published: string[] = [];
    for (let index = 0; index < count; index += 1) {
      const app = index % 2 === 0 ? a : b;
      published.push((await app.app.get(EventPublisher).publish(acme.companyId, 'conversation.created', conversationCreated(index))).id);
    }

    await waitFor(async () => (await deliveriesOf(a, created.body.id)).every((row) => row.status === 'succeeded'), { timeoutMs: 15_000 });
    const requests = receiver.to('/shared');
    expect(requests).toHaveLength(2 * count);
    const eventIds = requests.map((request) => JSON.parse(request.body).id as string);
    expect(eventIds).toEqual(published.flatMap((id) => [id, id]));
    const webhookIds = requests.map((request) => request.headers['webhook-id']);
    expect(new Set(webhookIds).size).toBe(count);
    webhookIds.forEach((id, index) => expect(id).toBe(webhookIds[index - (index % 2)]));
    for (const delivery of await deliveriesOf(b, created.body.id)) {
      expect(delivery.attempts.map((attempt) => attempt.statusCode)).toEqual([500, 200]);
    }
  });

  it('takes over the lane of a worker that died holding it once its lease expires, and delivers once', async () => {
    const created = await a.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: receiver.url('/orphaned'), events: ['conversation.created'] })
      .expect(201);
    const leaseUntil = new Date(Date.now() + 1000);
    await a
      .model<Webhook>(Webhook.name)
      .updateOne({ _id: created.body.id.slice(3), companyId: acme.companyId }, { leaseOwner: 'worker-that-died/1/0', leaseUntil });
    const event = await b.app.get(EventPublisher).publish(acme.companyId, 'conversation.created', conversationCreated(0));

    const [request] = await receiver.received('/orphaned', 1, 5000);
    expect(request.at).toBeGreaterThanOrEqual(leaseUntil.getTime());
    expect(JSON.parse(request.body).id).toBe(event.id);
    await waitFor(async () => (await deliveriesOf(a, created.body.id))[0]?.status === 'succeeded');
    // The lane is released right after the attempt is recorded.
    await waitFor(() => a.model<Webhook>(Webhook.name).findOne({ _id: created.body.id.slice(3), companyId: acme.companyId, leaseOwner: null }).lean());
    expect(receiver.to('/orphaned')).toHaveLength(1);
    const [delivery] = await deliveriesOf(b, created.body.id);
    expect(delivery.attempts).toHaveLength(1);
  });
});

describe('shutdown with an attempt in flight', () => {
  it('finishes and records the attempt, and frees the lane, before the app has closed', async () => {
    const engine = await startEmbeddedMongo();
    const receiver = await WebhookReceiver.start();
    const client = await new MongoClient(`${engine.uri}drain`).connect();
    try {
      const app = await createTestApp({ env: { MONGODB_URI: `${engine.uri}drain`, WEBHOOK_TIMEOUT_MS: '2000' } });
      const company = await registerCompany(app.http, 'Drain');
      receiver.answer('/drain', { status: 200, delayMs: 400 });
      const created = await app.http
        .post('/v1/webhooks')
        .set(company.auth)
        .send({ url: receiver.url('/drain'), events: ['conversation.created'] })
        .expect(201);
      await app.app.get(EventPublisher).publish(company.companyId, 'conversation.created', conversationCreated(0));
      await receiver.received('/drain', 1);
      await app.close();

      const webhookId = new ObjectId(created.body.id.slice(3));
      const delivery = await client.db().collection('webhook_deliveries').findOne({ webhookId });
      expect(delivery).toMatchObject({ status: 'succeeded', attempts: [expect.objectContaining({ statusCode: 200 })] });
      expect(await client.db().collection('webhooks').findOne({ _id: webhookId })).toMatchObject({ leaseOwner: null });
    } finally {
      await client.close();
      await receiver.close();
      await engine.stop();
    }
  });
});
