import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { uniqueEmail } from '../support/factories.js';
import { createTestApp, TEST_WEBHOOK_SECRET_KEYS, type TestApp } from '../support/test-app.js';

/** The security headers every answer carries, whatever its status: an API answer's CSP lets it load nothing. */
function expectSecurityHeaders(headers: Record<string, string>, csp: unknown = "default-src 'none';frame-ancestors 'none'"): void {
  expect(headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers['content-security-policy']).toEqual(csp);
  expect(headers).not.toHaveProperty('x-powered-by');
}

/** Swagger UI's page loads its own scripts, styles and data: images, and nothing from elsewhere. */
const DOCS_CSP = expect.stringMatching(/^default-src 'self';(?=.*script-src 'self';)(?=.*frame-ancestors 'none')/);

describe('NODE_ENV=production', () => {
  let engine: EmbeddedMongo;
  let production: Record<string, string>;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    production = { NODE_ENV: 'production', MONGODB_URI: `${engine.uri}production`, WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS, PASSWORD_SCRYPT_LOG_N: '17' };
  });
  afterAll(() => engine.stop());

  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ env: production });
    });
    afterAll(() => t.close());

    it('serves no API docs', async () => {
      await t.http.get('/docs').expect(404);
      await t.http.get('/docs-json').expect(404);
    });

    it('refuses registration (403)', async () => {
      const response = await t.http
        .post('/v1/auth/register')
        .send({ companyName: 'Acme', name: 'Ada', email: uniqueEmail('ada'), password: 'long enough password' })
        .expect(403);
      expect(response.body.message).toBe('Registration is disabled on this server');
    });

    it('sends the security headers on successes and on errors', async () => {
      expectSecurityHeaders((await t.http.get('/health').expect(200)).headers);
      expectSecurityHeaders((await t.http.get('/v1/agents').expect(401)).headers);
      expectSecurityHeaders((await t.http.get('/nowhere').expect(404)).headers);
      expectSecurityHeaders((await t.http.post('/v1/auth/login').set('content-type', 'application/json').send('{').expect(400)).headers);
    });
  });

  it('DOCS_ENABLED=true and ALLOW_REGISTRATION=true turn them on', async () => {
    const t = await createTestApp({ env: { ...production, DOCS_ENABLED: 'true', ALLOW_REGISTRATION: 'true' } });
    try {
      const docs = await t.http.get('/docs').redirects(1).expect(200);
      expect(docs.text).toContain('swagger-ui');
      expectSecurityHeaders(docs.headers, DOCS_CSP);
      expect(docs.headers['content-security-policy']).not.toContain('upgrade-insecure-requests');
      await t.http.get('/docs-json').expect(200);
      await t.http
        .post('/v1/auth/register')
        .send({ companyName: 'Acme', name: 'Ada', email: uniqueEmail('ada'), password: 'long enough password' })
        .expect(201);
    } finally {
      await t.close();
    }
  });
});

describe('outside production', () => {
  it('docs and registration are on unless turned off', async () => {
    const t = await createTestApp({ env: { DOCS_ENABLED: 'false', ALLOW_REGISTRATION: 'false' } });
    try {
      await t.http.get('/docs-json').expect(404);
      await t.http
        .post('/v1/auth/register')
        .send({ companyName: 'Acme', name: 'Ada', email: uniqueEmail('ada'), password: 'long enough password' })
        .expect(403);
      expectSecurityHeaders((await t.http.get('/health').expect(200)).headers);
    } finally {
      await t.close();
    }
  });
});
