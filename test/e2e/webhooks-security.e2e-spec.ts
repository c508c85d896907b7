import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { MongoClient, ObjectId } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver, type ReceivedRequest } from '../support/webhook-receiver.js';

const KEY_1 = `k1:${Buffer.alloc(32, 1).toString('base64')}`;
const KEY_2 = `k2:${Buffer.alloc(32, 2).toString('base64')}`;
const URL = 'https://hooks.example.com/parley';

/** The signature a receiver computes with the secret it was shown (docs/webhooks.md). */
function signedWith(secret: string, request: ReceivedRequest): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`).digest('base64');
  return request.headers['webhook-signature'] === `v1,${expected}`;
}

describe('webhook secrets under WEBHOOK_SECRET_KEYS, rotated', () => {
  let engine: EmbeddedMongo;
  let uri: string;
  let client: MongoClient;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    uri = `${engine.uri}rotation`;
    client = await new MongoClient(uri).connect();
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await receiver.close();
    await client.close();
    await engine.stop();
  });

  const storedSecret = async (id: string) => (await client.db().collection('webhooks').findOne({ _id: new ObjectId(id.slice(3)) }))?.secret as string;

  /** Boots an app on the shared database with these keys, publishes one event to the company and waits for `path` to get it. */
  async function deliverWith(keys: string, company: TestCompany, path: string): Promise<ReceivedRequest> {
    const app = await createTestApp({ env: { MONGODB_URI: uri, WEBHOOK_SECRET_KEYS: keys } });
    try {
      await app.app.get(EventPublisher).publish(company.companyId, 'message.sent', {} as never);
      return (await receiver.received(path, 1))[0];
    } finally {
      await app.close();
    }
  }

  it('opens a legacy secret, re-seals every secret under the first key at start-up, and signs with the same secret throughout', async () => {
    // Before WEBHOOK_SECRET_KEYS: sealed under the JWT_SECRET derivation (no key id).
    const legacyApp = await createTestApp({ env: { MONGODB_URI: uri } });
    const company = await registerCompany(legacyApp.http, 'Rotating');
    const legacy = await legacyApp.http.post('/v1/webhooks').set(company.auth).send({ url: receiver.url('/legacy'), events: ['message.sent'] }).expect(201);
    await legacyApp.close();
    expect(await storedSecret(legacy.body.id)).toMatch(/^v1\./);

    // k1 introduced: the legacy secret is re-sealed under k1 at start-up, and a new one is sealed under k1.
    const withK1 = await createTestApp({ env: { MONGODB_URI: uri, WEBHOOK_SECRET_KEYS: KEY_1 } });
    const keyed = await withK1.http.post('/v1/webhooks').set(company.auth).send({ url: receiver.url('/keyed'), events: ['message.sent'] }).expect(201);
    await withK1.close();
    expect(await storedSecret(legacy.body.id)).toMatch(/^v2\.k1\./);
    expect(await storedSecret(keyed.body.id)).toMatch(/^v2\.k1\./);

    // Rotation: k2 first, k1 still listed. Start-up re-seals both under k2; deliveries verify with the secrets shown at creation.
    const legacyRequest = await deliverWith(`${KEY_2},${KEY_1}`, company, '/legacy');
    expect(await storedSecret(legacy.body.id)).toMatch(/^v2\.k2\./);
    expect(await storedSecret(keyed.body.id)).toMatch(/^v2\.k2\./);
    expect(signedWith(legacy.body.secret, legacyRequest)).toBe(true);
    expect(signedWith(keyed.body.secret, (await receiver.received('/keyed', 1))[0])).toBe(true);

    // k1 dropped and JWT_SECRET rotated: nothing depends on either any more.
    const app = await createTestApp({ env: { MONGODB_URI: uri, WEBHOOK_SECRET_KEYS: KEY_2, JWT_SECRET: 'a-brand-new-jwt-secret-after-rotation-0123' } });
    try {
      await app.app.get(EventPublisher).publish(company.companyId, 'message.sent', {} as never);
      const [, second] = await receiver.received('/legacy', 2);
      expect(signedWith(legacy.body.secret, second)).toBe(true);
      const delivery = await waitFor(() => app.model<WebhookDelivery>(WebhookDelivery.name).findOne({ companyId: company.companyId, status: 'succeeded', webhookId: keyed.body.id.slice(3), sequence: 2 }).lean());
      expect(delivery.attempts.at(-1)?.error).toBeNull();
    } finally {
      await app.close();
    }
  });
});

describe('webhook answers and limits', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestCompany;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it('keeps at most 1 KB of what a failing target answered', async () => {
    receiver.answer('/chatty', { status: 500, body: 'é'.repeat(5000) });
    const hook = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/chatty'), events: ['message.sent'], retryConfig: { maxRetries: 0 } }).expect(201);
    await t.app.get(EventPublisher).publish(acme.companyId, 'message.sent', {} as never);
    const delivery = await waitFor(() =>
      t.model<WebhookDelivery>(WebhookDelivery.name).findOne({ companyId: acme.companyId, webhookId: hook.body.id.slice(3), status: 'failed' }).lean(),
    );
    const error = delivery.attempts[0].error as string;
    expect(error.startsWith('HTTP 500: éé')).toBe(true);
    expect(Buffer.byteLength(error, 'utf8')).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(error, 'utf8')).toBeGreaterThan(1000);
    expect(error).not.toContain('\uFFFD');
  });

  it('marks the answers that carry a secret no-store, on both interfaces', async () => {
    const a = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: URL, events: ['CHAT_SENT'] }).expect(201);
    expect(a.headers['cache-control']).toBe('no-store');
    const key = await createApiKey(t.http, acme, ['webhooks:manage']);
    const b = await t.http.post('/api/external/webhooks').set('x-api-key', key).send({ name: 'x', url: URL, events: ['CHAT_SENT'] }).expect(201);
    expect(b.headers['cache-control']).toBe('no-store');
    const list = await t.http.get('/v1/webhooks').set(acme.auth).expect(200);
    expect(list.headers['cache-control']).toBeUndefined();
  });
});
