import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { ApiKey } from '../../src/api-keys/api-key.schema.js';
import { addAgent, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

describe('/v1/api-keys', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
  });
  afterAll(() => t.close());

  it('creates a key shown once and stores only its hash', async () => {
    const response = await t.http
      .post('/v1/api-keys')
      .set(acme.auth)
      .send({ name: 'Connector', scopes: ['messages:write', 'webhooks:manage'] })
      .expect(201);
    expect(response.body).toMatchObject({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'Connector',
      scopes: ['messages:write', 'webhooks:manage'],
      key: expect.stringMatching(/^pk_[A-Za-z0-9_-]{43}$/),
      createdBy: acme.agentId,
      expiresAt: null,
      lastUsedAt: null,
      revokedAt: null,
      revokedReason: null,
    });
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.body.keyPrefix).toBe(response.body.key.slice(0, 7));

    const stored = await t
      .model<ApiKey>(ApiKey.name)
      .findOne({ _id: response.body.id, companyId: acme.companyId })
      .select('+keyHash')
      .lean();
    expect(stored?.keyHash).toBe(createHash('sha256').update(response.body.key).digest('hex'));
    expect(JSON.stringify(stored)).not.toContain(response.body.key);

    const list = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
    expect(list.body.data[0]).toMatchObject({ id: response.body.id, name: 'Connector' });
    expect(list.body.data[0]).not.toHaveProperty('key');
    expect(list.body.data[0]).not.toHaveProperty('keyHash');
  });

  it('refuses unknown scopes and empty scope lists', async () => {
    await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'x', scopes: ['root'] }).expect(400);
    await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'x', scopes: [] }).expect(400);
    await t.http.post('/v1/api-keys').set(acme.auth).send({ scopes: ['messages:write'] }).expect(400);
  });

  it('pages newest first with an opaque cursor, without repeats or gaps', async () => {
    const created: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      const response = await t.http
        .post('/v1/api-keys')
        .set(globex.auth)
        .send({ name: `key ${index}`, scopes: ['messages:write'] })
        .expect(201);
      created.unshift(response.body.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; nextCursor: string | null } } = await t.http
        .get('/v1/api-keys')
        .query(cursor ? { limit: 2, cursor } : { limit: 2 })
        .set(globex.auth)
        .expect(200);
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((key: { id: string }) => key.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(created);
  });

  it('keeps companies apart: listing, revoking and using a foreign key', async () => {
    const acmeKey = await t.http
      .post('/v1/api-keys')
      .set(acme.auth)
      .send({ name: 'acme only', scopes: ['messages:write'] })
      .expect(201);
    const globexList = await t.http.get('/v1/api-keys').set(globex.auth).expect(200);
    expect(globexList.body.data.map((key: { id: string }) => key.id)).not.toContain(acmeKey.body.id);

    const foreign = await t.http.delete(`/v1/api-keys/${acmeKey.body.id}`).set(globex.auth).expect(404);
    expect(foreign.body.message).toBe(`API key ${acmeKey.body.id} not found`);
    const stillActive = await t
      .model<ApiKey>(ApiKey.name)
      .findOne({ _id: acmeKey.body.id, companyId: acme.companyId })
      .lean();
    expect(stillActive?.revokedAt).toBeNull();
  });

  it('revokes at once and idempotently; a malformed id is a 404', async () => {
    const created = await t.http
      .post('/v1/api-keys')
      .set(acme.auth)
      .send({ name: 'short-lived', scopes: ['messages:write'] })
      .expect(201);
    const revoked = await t.http.delete(`/v1/api-keys/${created.body.id}`).set(acme.auth).expect(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    const again = await t.http.delete(`/v1/api-keys/${created.body.id}`).set(acme.auth).expect(200);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    await t.http.delete('/v1/api-keys/not-an-id').set(acme.auth).expect(404);
  });

  const useKey = (key: string) => t.http.get('/api/external/webhooks').set('x-api-key', key);
  const storedKey = (id: string) => t.model<ApiKey>(ApiKey.name).findOne({ _id: id, companyId: acme.companyId }).lean();

  it('stops a key at its expiresAt, and refuses an expiresAt in the past', async () => {
    const expiresAt = new Date(Date.now() + 1_000).toISOString();
    const created = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'Short-lived', scopes: ['webhooks:manage'], expiresAt }).expect(201);
    expect(created.body.expiresAt).toBe(expiresAt);
    await useKey(created.body.key).expect(200);
    await waitFor(async () => (await useKey(created.body.key)).status === 401, { message: 'the key to expire' });
    const past = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'x', scopes: ['webhooks:manage'], expiresAt: '2020-01-01T00:00:00Z' }).expect(400);
    expect(past.body.errors).toEqual([{ field: 'expiresAt', message: 'expiresAt must be in the future' }]);
    await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'x', scopes: ['webhooks:manage'], expiresAt: 'tomorrow' }).expect(400);
  });

  it('records lastUsedAt on use, at most once a minute', async () => {
    const created = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'Used', scopes: ['webhooks:manage'] }).expect(201);
    const before = Date.now();
    await useKey(created.body.key).expect(200);
    const first = await waitFor(async () => (await storedKey(created.body.id))?.lastUsedAt, { message: 'lastUsedAt' });
    expect(first.getTime()).toBeGreaterThanOrEqual(before - 1);
    for (let i = 0; i < 3; i++) await useKey(created.body.key).expect(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await storedKey(created.body.id))?.lastUsedAt).toEqual(first);
    const listed = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
    expect(listed.body.data.find((key: { id: string }) => key.id === created.body.id).lastUsedAt).toBe(first.toISOString());
  });

  it('revokes the keys an admin created when that admin is deactivated; the others keep working', async () => {
    const admin = await addAgent(t, acme, 'admin');
    const theirs = await t.http.post('/v1/api-keys').set(admin.auth).send({ name: 'Theirs', scopes: ['webhooks:manage'] }).expect(201);
    const ours = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'Ours', scopes: ['webhooks:manage'] }).expect(201);
    expect(theirs.body.createdBy).toBe(admin.agentId);
    await useKey(theirs.body.key).expect(200);

    await t.http.delete(`/v1/agents/${admin.agentId}`).set(acme.auth).expect(200);
    await useKey(theirs.body.key).expect(401);
    await useKey(ours.body.key).expect(200);
    expect(await storedKey(theirs.body.id)).toMatchObject({ revokedReason: 'creator_deactivated', revokedAt: expect.any(Date) });
    // reactivating the admin does not bring the keys back
    await t.http.patch(`/v1/agents/${admin.agentId}`).set(acme.auth).send({ isActive: true }).expect(200);
    await useKey(theirs.body.key).expect(401);
  });

  it('revokes the keys an admin created when that admin is given another role; promoting it again does not bring them back', async () => {
    const admin = await addAgent(t, acme, 'admin');
    const theirs = await t.http.post('/v1/api-keys').set(admin.auth).send({ name: 'Theirs', scopes: ['webhooks:manage'] }).expect(201);
    const ours = await t.http.post('/v1/api-keys').set(acme.auth).send({ name: 'Ours', scopes: ['webhooks:manage'] }).expect(201);
    const webhook = { url: 'https://hooks.example.com/parley', events: ['CHAT_RECEIVED'] };
    await t.http.post('/api/external/webhooks').set('x-api-key', theirs.body.key).send({ ...webhook, name: 'Before' }).expect(201);

    await t.http.patch(`/v1/agents/${admin.agentId}`).set(acme.auth).send({ role: 'supervisor' }).expect(200);
    const refused = await t.http.post('/api/external/webhooks').set('x-api-key', theirs.body.key).send({ ...webhook, name: 'After' }).expect(401);
    expect(refused.body).toEqual({ success: false, error: 'Invalid or revoked API key' });
    await useKey(ours.body.key).expect(200);
    expect(await storedKey(theirs.body.id)).toMatchObject({ revokedReason: 'creator_demoted', revokedAt: expect.any(Date) });
    const listed = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
    expect(listed.body.data.find((key: { id: string }) => key.id === theirs.body.id).revokedReason).toBe('creator_demoted');

    await t.http.patch(`/v1/agents/${admin.agentId}`).set(acme.auth).send({ role: 'admin' }).expect(200);
    await useKey(theirs.body.key).expect(401);
  });

  it('keeps the keys of an admin whose name or status changes, its role written unchanged', async () => {
    const admin = await addAgent(t, acme, 'admin');
    const theirs = await t.http.post('/v1/api-keys').set(admin.auth).send({ name: 'Theirs', scopes: ['webhooks:manage'] }).expect(201);
    await t.http.patch(`/v1/agents/${admin.agentId}`).set(acme.auth).send({ name: 'Renamed', status: 'away', role: 'admin' }).expect(200);
    await useKey(theirs.body.key).expect(200);
    expect(await storedKey(theirs.body.id)).toMatchObject({ revokedAt: null, revokedReason: null });
  });
});

describe('the cap on active API keys', () => {
  let t: TestApp;
  let company: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { API_KEYS_PER_COMPANY: '3' } });
    company = await registerCompany(t.http, 'Capped');
  });
  afterAll(() => t.close());

  const create = () => t.http.post('/v1/api-keys').set(company.auth).send({ name: 'k', scopes: ['messages:write'] });
  const active = () => t.model<ApiKey>(ApiKey.name).countDocuments({ companyId: company.companyId, revokedAt: null });

  it('refuses a key past API_KEYS_PER_COMPANY active ones; a revoked key frees its place', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await create().expect(201)).body.id);
    const refused = await create().expect(400);
    expect(refused.body.message).toBe('A company can have at most 3 active API keys: revoke one first');
    await t.http.delete(`/v1/api-keys/${ids[0]}`).set(company.auth).expect(200);
    await create().expect(201);
    expect(await active()).toBe(3);
  });

  it('holds under concurrent creates', async () => {
    const other = await registerCompany(t.http, 'Rushed');
    const results = await Promise.all(Array.from({ length: 12 }, () => t.http.post('/v1/api-keys').set(other.auth).send({ name: 'k', scopes: ['messages:write'] })));
    for (const result of results) expect([201, 400]).toContain(result.status);
    const stored = await t.model<ApiKey>(ApiKey.name).countDocuments({ companyId: other.companyId, revokedAt: null });
    expect(stored).toBeLessThanOrEqual(3);
    expect(stored).toBe(results.filter((result) => result.status === 201).length);
  });
});
