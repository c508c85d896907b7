import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { MongoClient, ObjectId } from 'mongodb';
import { Types } from 'mongoose';
import { startEmbeddedMongo } from '@parley/embedded-mongo';
import { EventPublisher } from '../../src/events/event-publisher.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { LANE_CHECK_ATTEMPTS, MAX_ATTEMPTS_PER_CLAIM } from '../../src/webhooks/delivery/lane-runner.js';
import { LANE_FREE } from '../../src/lanes/lane.schema.js';
import { WebhookDeliveryLanes, type Lane } from '../../src/webhooks/delivery/webhook-delivery-lanes.js';
import { WebhookDeliveriesRepository } from '../../src/webhooks/webhook-deliveries.repository.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

const hex = () => new Types.ObjectId().toHexString();

/** A claimed lane attempts the deliveries due behind its head in the same turn, in order, and stops when it must. */
describe('webhook lanes: several attempts per claim', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestCompany;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { WEBHOOK_TIMEOUT_MS: '2000' } });
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  const publish = (app: TestApp = t, company: TestCompany = acme): Promise<DomainEvent<'flow.executed'>> =>
    app.app.get(EventPublisher).publish(company.companyId, 'flow.executed', {
      execution: { executionId: hex(), flowId: hex(), conversationId: hex(), status: 'completed', steps: [] },
    });

  async function webhook(path: string, app: TestApp = t, company: TestCompany = acme): Promise<string> {
    const response = await app.http.post('/v1/webhooks').set(company.auth).send({ url: receiver.url(path), events: ['flow.executed'] }).expect(201);
    return response.body.id;
  }

  const eventIds = (path: string) => receiver.to(path).map((request) => JSON.parse(request.body).id as string);

  /** The lanes of webhook `id` among those a spied `claim` answered. */
  async function claimsOf(claims: { mock: { results: { value: unknown }[] } }, id: string): Promise<Lane[]> {
    const lanes = await Promise.all(claims.mock.results.map((result) => result.value as Promise<Lane | null>));
    return lanes.filter((lane): lane is Lane => String(lane?._id) === id.slice(3));
  }

  it('attempts the deliveries pending when a turn begins under one claim, in event order', async () => {
    // The first answer takes a while, so the next five events are fanned out while the lane is held: that turn
    // read its queue before them, and the next turn attempts all five.
    receiver.answer('/turn', { delayMs: 1500 }, {});
    const id = await webhook('/turn');
    const claims = jest.spyOn(t.app.get(WebhookDeliveryLanes).store, 'claim');
    const deliveries = t.model<WebhookDelivery>(WebhookDelivery.name);
    try {
      const events = [await publish()];
      await receiver.received('/turn', 1);
      for (let i = 0; i < 5; i++) events.push(await publish());
      await waitFor(async () => (await deliveries.countDocuments({ companyId: acme.companyId, webhookId: id.slice(3) })) === 6);
      expect(receiver.to('/turn')).toHaveLength(1);
      await receiver.received('/turn', 6);
      expect(eventIds('/turn')).toEqual(events.map((event) => event.id));
      expect(await claimsOf(claims, id)).toHaveLength(2);
    } finally {
      claims.mockRestore();
    }
  });

  it(`attempts at most ${MAX_ATTEMPTS_PER_CLAIM} deliveries per claim, and the rest under the next one, in event order`, async () => {
    // One more than a turn may attempt queues up while another worker holds the lane. The first turn after it reads
    // them all (it reads one beyond the cap, to learn when the rest is due) but stops at the cap: a second turn sends the last.
    const id = await webhook('/capped');
    const lane = { companyId: acme.companyId, _id: id.slice(3) };
    const webhooks = t.model<Webhook>(Webhook.name);
    await webhooks.updateOne(lane, { $set: { leaseOwner: 'another-worker', leaseUntil: new Date(Date.now() + 60_000) } });
    const claims = jest.spyOn(t.app.get(WebhookDeliveryLanes).store, 'claim');
    try {
      const events = [];
      for (let i = 0; i < MAX_ATTEMPTS_PER_CLAIM + 1; i++) events.push(await publish());
      expect(receiver.to('/capped')).toHaveLength(0);
      await webhooks.updateOne(lane, { $set: { leaseOwner: null, leaseUntil: LANE_FREE } });
      await receiver.received('/capped', events.length);
      expect(eventIds('/capped')).toEqual(events.map((event) => event.id));
      expect(await claimsOf(claims, id)).toHaveLength(2);
    } finally {
      claims.mockRestore();
    }
  });

  it('writes down the attempts of a turn together: each delivery attempted once, recorded once, in event order', async () => {
    // The deliveries queue up while another worker holds the lane, then three turns attempt them.
    const id = await webhook('/batched');
    const lane = { companyId: acme.companyId, _id: id.slice(3) };
    const webhooks = t.model<Webhook>(Webhook.name);
    await webhooks.updateOne(lane, { $set: { leaseOwner: 'another-worker', leaseUntil: new Date(Date.now() + 60_000) } });
    const records = jest.spyOn(t.app.get(WebhookDeliveriesRepository), 'recordAttempts');
    try {
      const events = [];
      for (let i = 0; i < 2 * MAX_ATTEMPTS_PER_CLAIM + 5; i++) events.push(await publish());
      await webhooks.updateOne(lane, { $set: { leaseOwner: null, leaseUntil: LANE_FREE } });
      await receiver.received('/batched', events.length);
      const deliveries = t.model<WebhookDelivery>(WebhookDelivery.name);
      const filter = { companyId: acme.companyId, webhookId: id.slice(3) };
      await waitFor(async () => (await deliveries.countDocuments({ ...filter, status: 'succeeded' })) === events.length);

      expect(eventIds('/batched')).toEqual(events.map((event) => event.id));
      const webhookIds = receiver.to('/batched').map((request) => request.headers['webhook-id']);
      const stored = await deliveries.find(filter).sort({ sequence: 1 }).lean();
      expect(stored.map((delivery) => [delivery.eventId, delivery.attemptCount, delivery.attempts.length])).toEqual(events.map((event) => [event.id, 1, 1]));
      expect(stored.map((delivery) => `dlv_${delivery._id.toHexString()}`)).toEqual(webhookIds);
      // A turn records its attempts together: at each lane check (every LANE_CHECK_ATTEMPTS attempts at most) and at its end.
      const ours = new Set(stored.map((delivery) => delivery._id.toHexString()));
      const written = records.mock.calls
        .map(([, attempts]) => attempts.filter((made) => ours.has(made.delivery._id.toHexString())).length)
        .filter((count) => count > 0);
      expect(written.reduce((sum, count) => sum + count, 0)).toBe(events.length);
      expect(Math.max(...written)).toBeLessThanOrEqual(LANE_CHECK_ATTEMPTS);
      expect(written.length).toBeLessThan(events.length / 3);
    } finally {
      records.mockRestore();
    }
  });

  it('stops the turn at the attempt in flight when the webhook is paused, and goes on in order on resume', async () => {
    receiver.answer('/paused-turn', { delayMs: 1000 }, {});
    const id = await webhook('/paused-turn');
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await publish());
    await receiver.received('/paused-turn', 1);
    await t.http.patch(`/v1/webhooks/${id}`).set(acme.auth).send({ isActive: false }).expect(200);
    const lane = () => t.model<Webhook>(Webhook.name).findOne({ companyId: acme.companyId, _id: id.slice(3) }).lean();
    await waitFor(async () => (await lane())?.leaseOwner === null);
    expect(receiver.to('/paused-turn').length).toBeLessThanOrEqual(2);

    await t.http.patch(`/v1/webhooks/${id}`).set(acme.auth).send({ isActive: true }).expect(200);
    await receiver.received('/paused-turn', 5);
    expect(eventIds('/paused-turn')).toEqual(events.map((event) => event.id));
  });

  it('stops the turn at the attempt in flight when the app shuts down, leaving the rest pending', async () => {
    const engine = await startEmbeddedMongo();
    const client = await new MongoClient(`${engine.uri}closing`).connect();
    try {
      const app = await createTestApp({ env: { MONGODB_URI: `${engine.uri}closing`, WEBHOOK_TIMEOUT_MS: '2000' } });
      const company = await registerCompany(app.http, 'Closing');
      receiver.answer('/closing', { delayMs: 300 });
      const id = await webhook('/closing', app, company);
      for (let i = 0; i < 5; i++) await publish(app, company);
      await receiver.received('/closing', 1);
      await app.close();

      expect(receiver.to('/closing').length).toBeLessThanOrEqual(2);
      const stored = await client.db().collection('webhook_deliveries').find({ webhookId: new ObjectId(id.slice(3)) }).toArray();
      expect(stored.filter((delivery) => delivery.status === 'pending').length).toBeGreaterThanOrEqual(3);
    } finally {
      await client.close();
      await engine.stop();
    }
  });
});
