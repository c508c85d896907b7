import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { ApiKey } from '../../src/api-keys/api-key.schema.js';
import { twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

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
      revokedAt: null,
    });
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
});
