import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent } from '../../src/agents/agent.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { createApiKey, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Issue 41, finding 6: validation says no to what it does not take, on every route. */
describe('validation refuses what it does not take', () => {
  let t: TestApp;
  let acme: TestCompany;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['messages:write', 'webhooks:manage']);
  });
  afterAll(() => t.close());

  const webhooks = () => t.model<Webhook>(Webhook.name).find({ companyId: acme.companyId }).sort({ _id: 1 }).lean();

  it('refuses retryConfig as an array (400 naming it) on both interfaces, storing and changing nothing', async () => {
    const array = [{ maxRetries: 1, backoffMs: 200 }];
    const fromA = await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: 'https://hooks.example.com/a', events: ['message.received'], retryConfig: array })
      .expect(400);
    expect(fromA.body.errors).toEqual([{ field: 'retryConfig', message: 'retryConfig must be an object' }]);
    expect(await webhooks()).toEqual([]);
    const created = await t.http
      .post('/api/external/webhooks')
      .set('x-api-key', key)
      .send({ name: 'Hook', url: 'https://hooks.example.com/b', events: ['CHAT_SENT'], retryConfig: { maxRetries: 2 } })
      .expect(201);
    const before = await webhooks();
    const patched = await t.http
      .patch(`/api/external/webhooks/${created.body.data.id}`)
      .set('x-api-key', key)
      .send({ retryConfig: array })
      .expect(400);
    expect(patched.body).toEqual({ success: false, error: 'retryConfig must be an object' });
    expect(await webhooks()).toEqual(before);
    expect(before[0]?.retryConfig).toEqual({ maxRetries: 2, backoffMs: 1000 });
  });

  it('refuses null where the document does not say nullable, storing nothing', async () => {
    const agents = await t.model<Agent>(Agent.name).countDocuments({ companyId: acme.companyId });
    const agent = await t.http.post('/v1/agents').set(acme.auth).send({ name: 'Ada', email: uniqueEmail(), role: null }).expect(400);
    expect(agent.body.errors).toEqual([expect.objectContaining({ field: 'role' })]);
    expect(await t.model<Agent>(Agent.name).countDocuments({ companyId: acme.companyId })).toBe(agents);

    for (const field of ['channel', 'externalId']) {
      const inbound = await t.http
        .post('/api/external/messages')
        .set('x-api-key', key)
        .send({ from: { phone: '+14155550111' }, text: 'Hi', [field]: null })
        .expect(400);
      expect(inbound.body.success).toBe(false);
      expect(inbound.body.error).toContain(field);
    }
    expect(await t.model<Message>(Message.name).countDocuments({ companyId: acme.companyId })).toBe(0);

    const webhook = await t.http
      .post('/v1/webhooks')
      .set(acme.auth)
      .send({ url: 'https://hooks.example.com/c', events: ['message.received'], isActive: null })
      .expect(400);
    expect(webhook.body.errors).toEqual([expect.objectContaining({ field: 'isActive' })]);
  });

  it('still takes null where it means something (a contact field cleared)', async () => {
    const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Grace', email: 'grace@example.com' }).expect(201);
    const cleared = await t.http.patch(`/v1/contacts/${contact.body.id}`).set(acme.auth).send({ email: null }).expect(200);
    expect(cleared.body.email).toBeNull();
  });

  it.each([
    ['/v1/agents/me?x=1', 'x'],
    ['/v1/settings?$where=1', '$where'],
    ['/health?verbose=true', 'verbose'],
    ['/v1/contacts?bogus=1', 'bogus'],
  ])('refuses unknown and $-prefixed query keys on every route: %s', async (path, field) => {
    const response = await t.http.get(path).set(acme.auth).expect(400);
    expect(response.body.errors ?? [{ field, message: response.body.detail }]).toEqual([
      expect.objectContaining({ field: expect.stringContaining(field.replace('$', '')) }),
    ]);
  });

  it('answers the envelope on Interface B, and routes keep the parameters they read', async () => {
    const refused = await t.http.get('/api/external/webhooks?foo=1').set('x-api-key', key).expect(400);
    expect(refused.body).toEqual({ success: false, error: 'foo is not a parameter of this query' });
    await t.http.get('/api/external/webhooks').set('x-api-key', key).expect(200);
    await t.http.get('/v1/contacts?limit=1').set(acme.auth).expect(200);
    await t.http.get('/health').expect(200);
  });
});
