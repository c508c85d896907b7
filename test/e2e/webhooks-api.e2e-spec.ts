import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { WebhookSecretBox } from '../../src/webhooks/webhook-secret-box.js';
import { addAgent, createApiKey, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const URL = 'https://hooks.example.com/parley';

describe('Interface A: /v1/webhooks', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
  });
  afterAll(() => t.close());

  const create = (company: TestCompany, body: Record<string, unknown>) => t.http.post('/v1/webhooks').set(company.auth).send(body);

  it('registers a webhook with defaults and shows the secret once, stored encrypted', async () => {
    const response = await create(acme, { url: URL, events: ['message.received', 'CHAT_SENT'] }).expect(201);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
      name: 'hooks.example.com',
      url: URL,
      events: ['message.received', 'CHAT_SENT'],
      channels: null,
      retryConfig: { maxRetries: 5, backoffMs: 1000 },
      isActive: true,
      disabledReason: null,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });

    const stored = await t
      .model<Webhook>(Webhook.name)
      .findOne({ _id: response.body.id.slice(3), companyId: acme.companyId })
      .select('+secret')
      .lean();
    expect(stored?.secret).not.toContain(response.body.secret.slice(6));
    expect(t.app.get(WebhookSecretBox).open(stored!.secret)).toBe(response.body.secret);

    const list = await t.http.get('/v1/webhooks').set(acme.auth).expect(200);
    expect(list.body.data[0]).toEqual({ ...response.body, secret: undefined });
    expect(JSON.stringify(list.body)).not.toContain('whsec_');
    const one = await t.http.get(`/v1/webhooks/${response.body.id}`).set(acme.auth).expect(200);
    expect(one.body).not.toHaveProperty('secret');
  });

  it('takes a name, a partial retryConfig and isActive', async () => {
    const response = await create(acme, {
      url: 'http://127.0.0.1:9/x',
      name: 'Paused sync',
      events: ['flow.executed'],
      retryConfig: { maxRetries: 0 },
      isActive: false,
    }).expect(201);
    expect(response.body).toMatchObject({ name: 'Paused sync', retryConfig: { maxRetries: 0, backoffMs: 1000 }, isActive: false });
  });

  it.each([
    ['an unknown event name', { url: URL, events: ['message.created'] }, 'events'],
    ['no events', { url: URL, events: [] }, 'events'],
    ['events that are not a list', { url: URL, events: 'message.sent' }, 'events'],
    ['the same name twice', { url: URL, events: ['CHAT_SENT', 'CHAT_SENT'] }, 'events'],
    ['a missing url', { events: ['CHAT_SENT'] }, 'url'],
    ['an ftp url', { url: 'ftp://example.com/in', events: ['CHAT_SENT'] }, 'url'],
    ['a url with credentials', { url: 'https://user:pw@example.com/in', events: ['CHAT_SENT'] }, 'url'],
    ['a url that is a number', { url: 42, events: ['CHAT_SENT'] }, 'url'],
    ['maxRetries above 10', { url: URL, events: ['CHAT_SENT'], retryConfig: { maxRetries: 11 } }, 'retryConfig.maxRetries'],
    ['backoffMs below 100', { url: URL, events: ['CHAT_SENT'], retryConfig: { backoffMs: 99 } }, 'retryConfig.backoffMs'],
    ['backoffMs above an hour', { url: URL, events: ['CHAT_SENT'], retryConfig: { backoffMs: 3_600_001 } }, 'retryConfig.backoffMs'],
    ['an unknown retryConfig field', { url: URL, events: ['CHAT_SENT'], retryConfig: { jitter: true } }, 'retryConfig.jitter'],
    ['an unknown field', { url: URL, events: ['CHAT_SENT'], secret: 'whsec_mine' }, 'secret'],
    ['isActive as a string', { url: URL, events: ['CHAT_SENT'], isActive: 'yes' }, 'isActive'],
  ])('400 for %s', async (_case, body, field) => {
    const response = await create(acme, body).expect(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
  });

  it('400 for $-operators in the body', async () => {
    const response = await create(acme, { url: URL, events: { $in: ['CHAT_SENT'] } }).expect(400);
    expect(response.body.message).toMatch(/\$in/);
  });

  it('is for admins only', async () => {
    const agent = await addAgent(t, acme, 'agent');
    const supervisor = await addAgent(t, acme, 'supervisor');
    await t.http.get('/v1/webhooks').set(agent.auth).expect(403);
    await t.http.post('/v1/webhooks').set(supervisor.auth).send({ url: URL, events: ['CHAT_SENT'] }).expect(403);
    await t.http.get('/v1/webhooks').expect(401);
  });

  it('keeps companies apart: a foreign id is a 404, never its data', async () => {
    const mine = await create(acme, { url: URL, events: ['CHAT_SENT'] }).expect(201);
    const id = mine.body.id as string;
    const list = await t.http.get('/v1/webhooks').set(globex.auth).expect(200);
    expect(list.body.data.map((webhook: { id: string }) => webhook.id)).not.toContain(id);
    for (const request of [
      t.http.get(`/v1/webhooks/${id}`),
      t.http.patch(`/v1/webhooks/${id}`).send({ isActive: false }),
      t.http.delete(`/v1/webhooks/${id}`),
      t.http.get(`/v1/webhooks/${id}/deliveries`),
      t.http.post(`/v1/webhooks/${id}/recover`).send({ since: '2020-01-01T00:00:00Z' }),
    ]) {
      const response = await request.set(globex.auth).expect(404);
      expect(response.body.message).toBe(`Webhook ${id} not found`);
    }
    const still = await t.http.get(`/v1/webhooks/${id}`).set(acme.auth).expect(200);
    expect(still.body.isActive).toBe(true);
  });

  it('404 for malformed ids', async () => {
    const hex = '6650f0c2a1b2c3d4e5f60718';
    for (const id of [hex, `wh_${hex.slice(1)}`, 'wh_zzzzzzzzzzzzzzzzzzzzzzzz', `dlv_${hex}`]) {
      await t.http.get(`/v1/webhooks/${id}`).set(acme.auth).expect(404);
      await t.http.delete(`/v1/webhooks/${id}`).set(acme.auth).expect(404);
    }
    const hook = await create(acme, { url: URL, events: ['CHAT_SENT'] }).expect(201);
    const retry = await t.http.post(`/v1/webhooks/${hook.body.id}/deliveries/${hex}/retry`).set(acme.auth).expect(404);
    expect(retry.body.message).toBe(`Delivery ${hex} not found`);
    await t.http.post(`/v1/webhooks/${hook.body.id}/deliveries/dlv_${hex}/retry`).set(acme.auth).expect(404);
  });

  it('updates fields, merges retryConfig, checks the new url', async () => {
    const hook = await create(acme, { url: URL, events: ['CHAT_SENT'], retryConfig: { maxRetries: 2, backoffMs: 500 } }).expect(201);
    const updated = await t.http
      .patch(`/v1/webhooks/${hook.body.id}`)
      .set(acme.auth)
      .send({ name: 'Renamed', events: ['conversation.closed'], retryConfig: { backoffMs: 2000 } })
      .expect(200);
    expect(updated.body).toMatchObject({ name: 'Renamed', url: URL, events: ['conversation.closed'], retryConfig: { maxRetries: 2, backoffMs: 2000 } });
    await t.http.patch(`/v1/webhooks/${hook.body.id}`).set(acme.auth).send({ url: 'gopher://x' }).expect(400);
    await t.http.patch(`/v1/webhooks/${hook.body.id}`).set(acme.auth).send({ name: '' }).expect(400);
  });

  it('pages newest first without repeats or gaps', async () => {
    const company = await registerCompany(t.http, 'Pager');
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ids.unshift((await create(company, { url: `${URL}/${index}`, events: ['CHAT_SENT'] }).expect(201)).body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await t.http
        .get('/v1/webhooks')
        .query(cursor ? { limit: 2, cursor } : { limit: 2 })
        .set(company.auth)
        .expect(200);
      seen.push(...page.body.data.map((webhook) => webhook.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(ids);
    await t.http.get('/v1/webhooks?limit=0').set(company.auth).expect(400);
  });

  it('deletes: { id, deleted: true }, then 404', async () => {
    const hook = await create(acme, { url: URL, events: ['CHAT_SENT'] }).expect(201);
    const deleted = await t.http.delete(`/v1/webhooks/${hook.body.id}`).set(acme.auth).expect(200);
    expect(deleted.body).toEqual({ id: hook.body.id, deleted: true });
    await t.http.get(`/v1/webhooks/${hook.body.id}`).set(acme.auth).expect(404);
    await t.http.delete(`/v1/webhooks/${hook.body.id}`).set(acme.auth).expect(404);
  });

  /** A company with `count` webhooks already stored. */
  async function crowdedCompany(name: string, count: number): Promise<TestCompany> {
    const company = await registerCompany(t.http, name);
    await t.model<Webhook>(Webhook.name).insertMany(
      Array.from({ length: count }, (_, index) => ({
        companyId: company.companyId,
        name: `hook ${index}`,
        url: `${URL}/${index}`,
        events: ['CHAT_SENT'],
        retryConfig: { maxRetries: 5, backoffMs: 1000 },
        secret: 'v1.sealed.elsewhere.x',
      })),
    );
    return company;
  }
  const webhooksOf = (company: TestCompany) => t.model<Webhook>(Webhook.name).countDocuments({ companyId: company.companyId });

  it('refuses a webhook beyond the 100th of a company', async () => {
    const company = await crowdedCompany('Crowded', 99);
    await create(company, { url: URL, events: ['CHAT_SENT'] }).expect(201);
    const refused = await create(company, { url: URL, events: ['CHAT_SENT'] }).expect(400);
    expect(refused.body.message).toBe('A company can have at most 100 webhooks');
    expect(await webhooksOf(company)).toBe(100);
  });

  it('holds the 100-webhook cap under concurrent creates', async () => {
    const company = await crowdedCompany('Rushed', 95);
    const results = await Promise.all(Array.from({ length: 15 }, () => create(company, { url: URL, events: ['CHAT_SENT'] })));
    for (const result of results) expect([201, 400]).toContain(result.status);
    const stored = await webhooksOf(company);
    expect(stored).toBeLessThanOrEqual(100);
    expect(stored).toBe(95 + results.filter((result) => result.status === 201).length);
  });

  it('validates the deliveries query and the recover body', async () => {
    const hook = await create(acme, { url: URL, events: ['CHAT_SENT'] }).expect(201);
    const empty = await t.http.get(`/v1/webhooks/${hook.body.id}/deliveries`).set(acme.auth).expect(200);
    expect(empty.body).toEqual({ data: [], nextCursor: null });
    await t.http.get(`/v1/webhooks/${hook.body.id}/deliveries?status=lost`).set(acme.auth).expect(400);
    await t.http.get(`/v1/webhooks/${hook.body.id}/deliveries?status[$ne]=failed`).set(acme.auth).expect(400);
    for (const body of [{}, { since: 'yesterday' }, { since: 1714521600 }, { since: '2026-05-01T00:00:00Z', until: 'x' }]) {
      await t.http.post(`/v1/webhooks/${hook.body.id}/recover`).set(acme.auth).send(body).expect(400);
    }
    const none = await t.http.post(`/v1/webhooks/${hook.body.id}/recover`).set(acme.auth).send({ since: '2020-01-01T00:00:00Z' }).expect(202);
    expect(none.body).toEqual({ requeued: 0 });
  });
});

describe('Interface B: /api/external/webhooks', () => {
  let t: TestApp;
  let acme: TestCompany;
  let key: string;
  let globexKey: string;

  beforeAll(async () => {
    t = await createTestApp();
    const companies = await twoCompanies(t.http);
    acme = companies.acme;
    const globex = companies.globex;
    key = await createApiKey(t.http, acme, ['webhooks:manage']);
    globexKey = await createApiKey(t.http, globex, ['webhooks:manage']);
  });
  afterAll(() => t.close());

  const api = () => ({
    get: (path = '') => t.http.get(`/api/external/webhooks${path}`).set('x-api-key', key),
    post: (body: unknown) => t.http.post('/api/external/webhooks').set('x-api-key', key).send(body as object),
    patch: (path: string, body: unknown) => t.http.patch(`/api/external/webhooks${path}`).set('x-api-key', key).send(body as object),
    delete: (path: string) => t.http.delete(`/api/external/webhooks${path}`).set('x-api-key', key),
  });

  it('creates (201) with retryConfig and the secret, in the envelope', async () => {
    const response = await api()
      .post({ name: 'CRM', url: URL, events: ['CHAT_RECEIVED', 'CHAT_SENT'], retryConfig: { maxRetries: 3, backoffMs: 2000 } })
      .expect(201);
    expect(response.body).toEqual({
      success: true,
      data: {
        id: expect.stringMatching(/^wh_[0-9a-f]{24}$/),
        name: 'CRM',
        url: URL,
        events: ['CHAT_RECEIVED', 'CHAT_SENT'],
        channels: null,
        retryConfig: { maxRetries: 3, backoffMs: 2000 },
        isActive: true,
        disabledReason: null,
        createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
        secret: expect.stringMatching(/^whsec_/),
      },
    });
  });

  it('lists without retryConfig and gets one with it: one store with Interface A', async () => {
    const fromA = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: URL, name: 'From A', events: ['message.sent'] }).expect(201);
    const list = await api().get().expect(200);
    expect(list.body.success).toBe(true);
    const times = { createdAt: fromA.body.createdAt, updatedAt: fromA.body.updatedAt };
    expect(list.body.data[0]).toEqual({
      id: fromA.body.id,
      name: 'From A',
      url: URL,
      events: ['message.sent'],
      channels: null,
      isActive: true,
      disabledReason: null,
      ...times,
    });
    for (const webhook of list.body.data) {
      expect(Object.keys(webhook).sort()).toEqual(['channels', 'createdAt', 'disabledReason', 'events', 'id', 'isActive', 'name', 'updatedAt', 'url']);
    }

    const one = await api().get(`/${fromA.body.id}`).expect(200);
    expect(one.body).toEqual({
      success: true,
      data: {
        id: fromA.body.id,
        name: 'From A',
        url: URL,
        events: ['message.sent'],
        channels: null,
        retryConfig: { maxRetries: 5, backoffMs: 1000 },
        isActive: true,
        disabledReason: null,
        ...times,
      },
    });
  });

  it('pauses and resumes with PATCH (200), keeping the webhook', async () => {
    const created = await api().post({ name: 'Pausable', url: URL, events: ['FLOW_EXECUTED'] }).expect(201);
    const id = created.body.data.id as string;
    const paused = await api().patch(`/${id}`, { isActive: false }).expect(200);
    expect(paused.body).toEqual({
      success: true,
      data: { ...created.body.data, secret: undefined, isActive: false, updatedAt: expect.any(String) },
    });
    expect(paused.body.data.updatedAt >= created.body.data.updatedAt).toBe(true);
    expect((await api().get(`/${id}`).expect(200)).body.data.isActive).toBe(false);
    const resumed = await api().patch(`/${id}`, { isActive: true, name: 'Resumed', retryConfig: { maxRetries: 1 } }).expect(200);
    expect(resumed.body.data).toMatchObject({ isActive: true, name: 'Resumed', retryConfig: { maxRetries: 1, backoffMs: 1000 } });
  });

  it('deletes with a message; an unknown, foreign or malformed id is a 404 in the envelope', async () => {
    const created = await api().post({ name: 'Doomed', url: URL, events: ['CHAT_SENT'] }).expect(201);
    const id = created.body.data.id as string;

    const foreign = await t.http.get(`/api/external/webhooks/${id}`).set('x-api-key', globexKey).expect(404);
    expect(foreign.body).toEqual({ success: false, error: `Webhook ${id} not found` });
    await t.http.delete(`/api/external/webhooks/${id}`).set('x-api-key', globexKey).expect(404);
    await t.http.patch(`/api/external/webhooks/${id}`).set('x-api-key', globexKey).send({ isActive: false }).expect(404);

    const deleted = await api().delete(`/${id}`).expect(200);
    expect(deleted.body).toEqual({ success: true, message: `Webhook ${id} deleted` });
    expect((await api().get(`/${id}`).expect(404)).body).toEqual({ success: false, error: `Webhook ${id} not found` });
    expect((await api().delete(`/${id}`).expect(404)).body).toEqual({ success: false, error: `Webhook ${id} not found` });
    expect((await api().get('/not-an-id').expect(404)).body).toEqual({ success: false, error: 'Webhook not-an-id not found' });
    expect((await api().patch('/wh_123', { isActive: true }).expect(404)).body.success).toBe(false);
  });

  it('400 in the envelope for bad input', async () => {
    const cases: unknown[] = [
      { url: URL, events: ['CHAT_SENT'] },
      { name: 'x', url: URL, events: ['CHAT_DELETED'] },
      { name: 'x', url: 'not a url', events: ['CHAT_SENT'] },
      { name: 'x', url: URL, events: ['CHAT_SENT'], retryConfig: { maxRetries: -1 } },
      { name: 'x', url: URL, events: ['CHAT_SENT'], retryConfig: { backoffMs: '1000' } },
      { name: 'x', url: URL, events: ['CHAT_SENT'], workspaceId: 'other' },
      { name: { $ne: null }, url: URL, events: ['CHAT_SENT'] },
    ];
    for (const body of cases) {
      const response = await api().post(body).expect(400);
      expect(response.body).toEqual({ success: false, error: expect.any(String) });
    }
    const created = await api().post({ name: 'Valid', url: URL, events: ['CHAT_SENT'] }).expect(201);
    const badPatch = await api().patch(`/${created.body.data.id}`, { isActive: 'no' }).expect(400);
    expect(badPatch.body).toEqual({ success: false, error: expect.stringContaining('isActive') });
    const malformed = await t.http
      .post('/api/external/webhooks')
      .set('x-api-key', key)
      .set('content-type', 'application/json')
      .send('{"name":')
      .expect(400);
    expect(malformed.body).toEqual({ success: false, error: 'Malformed JSON in the request body' });
  });

  it('401 without a key or with a bad one, 403 without the scope, in the envelope', async () => {
    const missing = await t.http.get('/api/external/webhooks').expect(401);
    expect(missing.body).toEqual({ success: false, error: 'Missing API key (x-api-key header)' });
    const bad = await t.http.get('/api/external/webhooks').set('x-api-key', 'pk_not-a-real-key').expect(401);
    expect(bad.body).toEqual({ success: false, error: 'Invalid or revoked API key' });
    const bearer = await t.http.get('/api/external/webhooks').set(acme.auth).expect(401);
    expect(bearer.body.success).toBe(false);

    const messagesOnly = await createApiKey(t.http, acme, ['messages:write']);
    for (const request of [
      t.http.get('/api/external/webhooks'),
      t.http.post('/api/external/webhooks').send({ name: 'x', url: URL, events: ['CHAT_SENT'] }),
      t.http.delete('/api/external/webhooks/wh_6650f0c2a1b2c3d4e5f60718'),
    ]) {
      const response = await request.set('x-api-key', messagesOnly).expect(403);
      expect(response.body).toEqual({ success: false, error: 'The API key lacks the scope webhooks:manage' });
    }
  });
});

describe('Interface B: rate limit', () => {
  let t: TestApp;

  beforeAll(async () => {
    // Windows are aligned on the clock: an hour's keeps this test's few requests inside one.
    t = await createTestApp({ env: { THROTTLE_LIMIT: '3', THROTTLE_TTL_MS: '3600000' } });
  });
  afterAll(() => t.close());

  it('429 in the envelope with Retry-After', async () => {
    const company = await registerCompany(t.http, 'Busy');
    const key = await createApiKey(t.http, company, ['webhooks:manage']);
    for (let index = 0; index < 3; index += 1) await t.http.get('/api/external/webhooks').set('x-api-key', key).expect(200);
    const refused = await t.http.get('/api/external/webhooks').set('x-api-key', key).expect(429);
    expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/retry after \d+ second/i) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  });
});
