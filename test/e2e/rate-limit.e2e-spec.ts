import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiKeyAuth } from '../../src/auth/decorators/api-key-auth.decorator.js';
import { createApiKey, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

@ApiKeyAuth()
@Controller({ path: 'api/external/rate-probe', version: VERSION_NEUTRAL })
class ExternalProbeController {
  @Get()
  probe() {
    return { success: true, data: {} };
  }
}

const LIMIT = 3;
const WINDOW_MS = 60_000;

describe('rate limiting', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    // Registration itself is rate-limited per address, so the companies are made before the tiny limit
    // matters: each test below uses its own principal.
    t = await createTestApp({ env: { THROTTLE_LIMIT: String(LIMIT), THROTTLE_TTL_MS: String(WINDOW_MS) } });
    ({ acme, globex } = await twoCompanies(t.http));
  });
  afterAll(() => t.close());

  it('counts per agent, with the headers on every response and Retry-After on the 429', async () => {
    const remaining: string[] = [];
    for (let index = 0; index < LIMIT; index += 1) {
      const response = await t.http.get('/v1/api-keys').set(acme.auth).expect(200);
      expect(response.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(response.headers['ratelimit-policy']).toBe(`"default";q=${LIMIT};w=60`);
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(response.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(60);
      remaining.push(response.headers['x-ratelimit-remaining']);
      expect(response.headers.ratelimit).toBe(
        `"default";r=${response.headers['x-ratelimit-remaining']};t=${response.headers['x-ratelimit-reset']}`,
      );
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await t.http.get('/v1/api-keys').set(acme.auth).expect(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 429, statusCode: 429, error: 'Too Many Requests' });
    expect(refused.body.message).toMatch(/retry after \d+ second/);

    // Another agent of another company still has its own quota.
    await t.http.get('/v1/api-keys').set(globex.auth).expect(200);
  });

  it('counts per API key on Interface B and answers the 429 in the envelope', async () => {
    const app = await createTestApp({ env: { THROTTLE_LIMIT: '3' }, controllers: [ExternalProbeController] });
    try {
      const company = await registerCompany(app.http, 'Initech');
      const key = await createApiKey(app.http, company, ['webhooks:manage']);
      const other = await createApiKey(app.http, company, ['webhooks:manage']);
      await app.http.get('/api/external/rate-probe').set('x-api-key', key).expect(200);
      await app.http.get('/api/external/rate-probe').set('x-api-key', key).expect(200);
      const first = await app.http.get('/api/external/rate-probe').set('x-api-key', key).expect(200);
      expect(first.headers['x-ratelimit-remaining']).toBe('0');
      const refused = await app.http.get('/api/external/rate-probe').set('x-api-key', key).expect(429);
      expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/^Too many requests/) });
      expect(refused.headers['retry-after']).toBeDefined();
      await app.http.get('/api/external/rate-probe').set('x-api-key', other).expect(200);
    } finally {
      await app.close();
    }
  });

  it('counts anonymous callers per address', async () => {
    const app = await createTestApp({ env: { THROTTLE_LIMIT: '2' } });
    try {
      const attempt = () => app.http.post('/v1/auth/login').send({ email: 'nobody@example.com', password: 'wrong password' });
      expect((await attempt()).status).toBe(401);
      expect((await attempt()).status).toBe(401);
      const refused = await attempt();
      expect(refused.status).toBe(429);
      expect(refused.headers['retry-after']).toBeDefined();
    } finally {
      await app.close();
    }
  });
});
