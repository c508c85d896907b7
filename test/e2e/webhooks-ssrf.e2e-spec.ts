import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** A public address that needs no DNS; nothing is ever sent to it in these tests. */
const PUBLIC_URL = 'http://93.184.215.14/hooks';

describe('SSRF rule with WEBHOOK_ALLOW_PRIVATE_URLS=false', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let acme: TestCompany;
  let key: string;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WEBHOOK_TIMEOUT_MS: '500' } });
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['webhooks:manage']);
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  it.each([
    [`http://127.0.0.1:${8080}/in`, '127.0.0.1 is a loopback address'],
    ['http://localhost:8080/in', 'localhost resolves to'],
    ['http://[::1]/in', '::1 is a loopback address'],
    ['http://[::ffff:127.0.0.1]/in', 'loopback'],
    ['http://10.1.2.3/in', 'a private address'],
    ['http://192.168.0.10/in', 'a private address'],
    ['http://172.20.0.1/in', 'a private address'],
    ['http://[fd00::1]/in', 'a private address'],
    ['http://169.254.10.10/in', 'a link-local address'],
    ['http://[fe80::1]/in', 'a link-local address'],
    ['http://100.64.1.1/in', 'CGNAT'],
    ['http://0.0.0.0/in', 'unspecified'],
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'cloud metadata address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'cloud metadata host'],
    ['http://[::7f00:1]/in', 'not a global unicast IPv6 address'],
    ['http://[::8.8.8.8]/in', 'not a global unicast IPv6 address'],
    ['http://[2001:db8::1]/in', 'special-purpose'],
  ])('refuses %s at registration on both interfaces', async (url, reason) => {
    const a = await t.http.post('/v1/webhooks').set(acme.auth).send({ url, events: ['CHAT_SENT'] }).expect(400);
    expect(a.body.errors).toEqual([{ field: 'url', message: expect.stringContaining(reason) }]);
    const b = await t.http.post('/api/external/webhooks').set('x-api-key', key).send({ name: 'x', url, events: ['CHAT_SENT'] }).expect(400);
    expect(b.body).toEqual({ success: false, error: expect.stringContaining(reason) });
  });

  it('accepts a public address, and refuses changing it to a private one', async () => {
    const created = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: PUBLIC_URL, events: ['CHAT_SENT'] }).expect(201);
    const refused = await t.http.patch(`/v1/webhooks/${created.body.id}`).set(acme.auth).send({ url: 'http://127.0.0.1:9/x' }).expect(400);
    expect(refused.body.errors).toEqual([{ field: 'url', message: 'url refused: 127.0.0.1 is a loopback address' }]);
    const b = await t.http
      .patch(`/api/external/webhooks/${created.body.id}`)
      .set('x-api-key', key)
      .send({ url: 'http://192.168.1.1/' })
      .expect(400);
    expect(b.body.success).toBe(false);
    expect((await t.http.get(`/v1/webhooks/${created.body.id}`).set(acme.auth).expect(200)).body.url).toBe(PUBLIC_URL);
  });

  it.each([
    ['an IP literal', (port: number) => `http://127.0.0.1:${port}/literal`, 'refused: 127.0.0.1 is a loopback address'],
    ['a name resolved at connect time', (port: number) => `http://localhost:${port}/resolved`, 'refused: localhost resolves to'],
  ])('refuses again at delivery a target that became private (%s)', async (_case, target, reason) => {
    const created = await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: PUBLIC_URL, events: ['CHAT_SENT'], retryConfig: { maxRetries: 0 } })
      .expect(201);
    // What a DNS change after registration amounts to: the target now points at this machine.
    const url = target(Number(new URL(receiver.baseUrl).port));
    await t.model<Webhook>(Webhook.name).updateOne({ _id: created.body.id.slice(3), companyId: acme.companyId }, { url });
    await t.app.get(EventPublisher).publish(acme.companyId, 'message.sent', {} as never);

    const delivery = await waitFor(() =>
      t
        .model<WebhookDelivery>(WebhookDelivery.name)
        .findOne({ companyId: acme.companyId, webhookId: created.body.id.slice(3), status: 'failed' })
        .lean(),
    );
    expect(delivery.attempts).toEqual([expect.objectContaining({ statusCode: null, error: expect.stringContaining(reason) })]);
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('SSRF rule with WEBHOOK_ALLOW_PRIVATE_URLS=true', () => {
  let t: TestApp;
  let acme: TestCompany;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_TIMEOUT_MS: '500' } });
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['webhooks:manage']);
  });
  afterAll(() => t.close());

  it.each([
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254 is a cloud metadata address'],
    ['http://[fd00:ec2::254]/latest/meta-data/', 'fd00:ec2::254 is a cloud metadata address'],
    ['http://[::ffff:169.254.169.254]/', 'a cloud metadata address'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'a cloud metadata address'],
    ['http://100.100.100.200/latest/meta-data/', 'a cloud metadata address'],
    ['http://metadata.google.internal/computeMetadata/v1/', 'metadata.google.internal is a cloud metadata host'],
  ])('still refuses the cloud metadata target %s, on both interfaces', async (url, reason) => {
    const a = await t.http.post('/v1/webhooks').set(acme.auth).send({ url, events: ['CHAT_SENT'] }).expect(400);
    expect(a.body.errors).toEqual([{ field: 'url', message: expect.stringContaining(reason) }]);
    const b = await t.http.post('/api/external/webhooks').set('x-api-key', key).send({ name: 'x', url, events: ['CHAT_SENT'] }).expect(400);
    expect(b.body).toEqual({ success: false, error: expect.stringContaining(reason) });
  });

  it('accepts private targets, and refuses at delivery one that became a metadata address', async () => {
    await t.http.post('/v1/webhooks').set(acme.auth).send({ url: 'http://10.1.2.3/in', events: ['CHAT_SENT'] }).expect(201);
    const created = await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: 'http://127.0.0.1:9/in', events: ['CHAT_SENT'], retryConfig: { maxRetries: 0 } })
      .expect(201);
    await t.model<Webhook>(Webhook.name).updateOne({ _id: created.body.id.slice(3), companyId: acme.companyId }, { url: 'http://169.254.169.254/latest/meta-data/' });
    await t.app.get(EventPublisher).publish(acme.companyId, 'message.sent', {} as never);
    const delivery = await waitFor(() =>
      t.model<WebhookDelivery>(WebhookDelivery.name).findOne({ companyId: acme.companyId, webhookId: created.body.id.slice(3), status: 'failed' }).lean(),
    );
    expect(delivery.attempts).toEqual([expect.objectContaining({ statusCode: null, error: 'refused: 169.254.169.254 is a cloud metadata address' })]);
  });
});
