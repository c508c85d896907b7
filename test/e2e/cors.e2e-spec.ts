import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Contact } from '../../src/contacts/contact.schema.js';
import { loadAppConfig } from '../../src/config/environment.js';
import { registerCompany, type TestCompany } from '../support/factories.js';
import { listen, SseClients } from '../support/sse-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const ALLOWED = 'https://app.example.com';
const OTHER = 'https://evil.example.net';

/** Issue 41, finding 9: a browser front end of a listed origin can call Interface A, and nothing else can. */
describe('CORS (CORS_ORIGINS)', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_ORIGINS: `${ALLOWED}, http://localhost:5173`, THROTTLE_LIMIT: '100000' } });
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  const preflight = (origin: string, path = '/v1/contacts') =>
    t.http.options(path).set({
      Origin: origin,
      'Access-Control-Request-Method': 'PATCH',
      'Access-Control-Request-Headers': 'authorization,content-type,idempotency-key',
    });
  const contacts = () => t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId });

  it('answers the preflight of a listed origin (204) with what it may send, before authentication and limits', async () => {
    const response = await preflight(ALLOWED).expect(204);
    expect(response.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(response.headers['access-control-allow-methods']).toBe('GET,POST,PUT,PATCH,DELETE');
    expect(response.headers['access-control-allow-headers']).toContain('Authorization');
    expect(response.headers['access-control-allow-headers']).toContain('Idempotency-Key');
    expect(response.headers['access-control-max-age']).toBe('600');
    expect(response.headers['access-control-allow-credentials']).toBeUndefined();
    expect((await preflight('http://localhost:5173', '/api/external/messages').expect(204)).headers['access-control-allow-origin']).toBe(
      'http://localhost:5173',
    );
  });

  it('gives another origin nothing to allow it (its browser keeps the answer from the page), and runs no route', async () => {
    const before = await contacts();
    const response = await preflight(OTHER).expect(204);
    expect(response.headers['access-control-allow-origin']).toBeUndefined();
    const simple = await t.http.get('/v1/agents/me').set(acme.auth).set('Origin', OTHER).expect(200);
    expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    expect(await contacts()).toBe(before);
  });

  it('exposes the headers clients read on answers to a listed origin, errors included', async () => {
    const ok = await t.http.get('/v1/agents/me').set(acme.auth).set('Origin', ALLOWED).expect(200);
    expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
    const exposed = String(ok.headers['access-control-expose-headers']).split(',');
    expect(exposed).toEqual(
      expect.arrayContaining(['x-request-id', 'RateLimit', 'RateLimit-Policy', 'X-RateLimit-Remaining', 'Retry-After', 'Idempotent-Replayed']),
    );
    const unauthorized = await t.http.get('/v1/agents/me').set('Origin', ALLOWED).expect(401);
    expect(unauthorized.headers['access-control-allow-origin']).toBe(ALLOWED);
  });

  it('serves event streams cross-origin to a listed origin', async () => {
    const clients = new SseClients();
    try {
      const base = await listen(t.app);
      const stream = await clients.open(`${base}/v1/events/stream`, { ...acme.auth, Origin: ALLOWED });
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toContain('text/event-stream');
      expect(stream.headers['access-control-allow-origin']).toBe(ALLOWED);
    } finally {
      clients.closeAll();
    }
  });

  it('is closed by default, and refuses a wildcard or a path in CORS_ORIGINS', async () => {
    const closed = await createTestApp();
    try {
      const response = await closed.http.options('/v1/contacts').set({ Origin: ALLOWED, 'Access-Control-Request-Method': 'POST' });
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await closed.close();
    }
    expect(() => loadAppConfig({ CORS_ORIGINS: '*' })).toThrow('CORS_ORIGINS must be a comma-separated list of origins');
    expect(() => loadAppConfig({ CORS_ORIGINS: 'https://app.example.com/path' })).toThrow('CORS_ORIGINS must be');
    expect(loadAppConfig({ CORS_ORIGINS: 'https://App.Example.com:8443/' }).corsOrigins).toEqual(['https://app.example.com:8443']);
  });
});
