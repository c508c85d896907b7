import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ApiKey } from '../../src/api-keys/api-key.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** API keys are looked up from memory; a revocation in the process applies from the next request on. */
describe('API keys, from memory', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  const listWebhooks = (key: string) => t.http.get('/api/external/webhooks').set('x-api-key', key);

  it('reads a key once for many requests', async () => {
    const key = await createApiKey(t.http, acme, ['webhooks:manage']);
    const reads = jest.spyOn(t.model(ApiKey.name), 'findOne');
    try {
      for (let i = 0; i < 5; i++) await listWebhooks(key).expect(200);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('reads an unknown key on every request, keeping no place for it', async () => {
    const unknown = `${(await createApiKey(t.http, acme, ['webhooks:manage'])).slice(0, -4)}0000`;
    const reads = jest.spyOn(t.model(ApiKey.name), 'findOne');
    try {
      for (let i = 0; i < 3; i++) await listWebhooks(unknown).expect(401);
      expect(reads).toHaveBeenCalledTimes(3);
    } finally {
      reads.mockRestore();
    }
  });

  it('refuses a key on the request after its revocation, however recently it was used', async () => {
    const key = await createApiKey(t.http, acme, ['webhooks:manage']);
    await listWebhooks(key).expect(200);
    const keys = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
    const id = keys.body.data.find((listed: { keyPrefix: string }) => key.startsWith(listed.keyPrefix)).id;
    await t.http.delete(`/v1/api-keys/${id}`).set(acme.auth).expect(200);
    const refused = await listWebhooks(key).expect(401);
    expect(refused.body).toEqual({ success: false, error: 'Invalid or revoked API key' });
  });

  it('sees a write made through the model outside the API, as a script in this process would', async () => {
    const key = await createApiKey(t.http, acme, ['webhooks:manage']);
    await listWebhooks(key).expect(200);
    await t.model<ApiKey>(ApiKey.name).updateMany({ companyId: acme.companyId }, { $set: { scopes: ['messages:write'] } });
    await listWebhooks(key).expect(403);
  });
});
