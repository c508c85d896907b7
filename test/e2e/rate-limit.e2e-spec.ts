import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOkResponse, ApiResponse } from '@nestjs/swagger';
import { ApiKeyAuth } from '../../src/auth/decorators/api-key-auth.decorator.js';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

@ApiKeyAuth()
@Controller({ path: 'api/external/rate-probe', version: VERSION_NEUTRAL })
class ExternalProbeController {
  @Get()
  // Documented as a route is, so the answers it gives pass the document's check (test-app.ts).
  @ApiOkResponse({ schema: { type: 'object' } })
  @ApiResponse({ status: 429, schema: { type: 'object' } })
  probe() {
    return { success: true, data: {} };
  }
}

const LIMIT = 3;
/** Windows are aligned on the clock: an hour's window keeps each test's counts inside one window. */
const HOUR = '3600000';
/** With TRUST_PROXY=loopback, the test's own requests (from 127.0.0.1) may say which client they come from. */
const PROXIED = { TRUST_PROXY: 'loopback', THROTTLE_TTL_MS: HOUR };
const from = (address: string) => ({ 'X-Forwarded-For': address });

describe('rate limiting per caller', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...PROXIED, THROTTLE_LIMIT: String(LIMIT) }, controllers: [ExternalProbeController] });
    // Registration counts its weight (at most the whole limit) against its address: one address per company.
    acme = await registerCompany(t.http, 'Acme', from('198.51.100.1'));
    globex = await registerCompany(t.http, 'Globex', from('198.51.100.2'));
  });
  afterAll(() => t.close());

  it('counts per agent, with the headers on every response and Retry-After on the 429', async () => {
    const remaining: string[] = [];
    for (let index = 0; index < LIMIT; index += 1) {
      const response = await t.http.get('/v1/agents').set(acme.auth).expect(200);
      expect(response.headers['x-ratelimit-limit']).toBe(String(LIMIT));
      expect(response.headers['ratelimit-policy']).toBe(`"default";q=${LIMIT};w=3600`);
      expect(Number(response.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      expect(Number(response.headers['x-ratelimit-reset'])).toBeLessThanOrEqual(3600);
      remaining.push(response.headers['x-ratelimit-remaining']);
      expect(response.headers.ratelimit).toBe(`"default";r=${response.headers['x-ratelimit-remaining']};t=${response.headers['x-ratelimit-reset']}`);
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await t.http.get('/v1/agents').set(acme.auth).expect(429);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ status: 429, statusCode: 429, error: 'Too Many Requests' });
    expect(refused.body.message).toMatch(/retry after \d+ second/);

    // Another agent of another company still has its own quota.
    await t.http.get('/v1/agents').set(globex.auth).expect(200);
  });

  it('counts per API key on Interface B and answers the 429 in the envelope', async () => {
    const app = await createTestApp({ env: { ...PROXIED, THROTTLE_LIMIT: '3' }, controllers: [ExternalProbeController] });
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

  it('counts a weighted route as its weight: analytics metrics 10, login 5', async () => {
    const app = await createTestApp({ env: { ...PROXIED, THROTTLE_LIMIT: '25' } });
    try {
      const company = await registerCompany(app.http, 'Weighty', from('203.0.113.10'));
      const metrics = () => app.http.get('/v1/analytics/metrics?startDate=2025-01-01&endDate=2025-01-07').set(company.auth);
      expect((await metrics().expect(200)).headers['x-ratelimit-remaining']).toBe('15');
      expect((await metrics().expect(200)).headers['x-ratelimit-remaining']).toBe('5');
      await metrics().expect(429);

      const login = () => app.http.post('/v1/auth/login').set(from('203.0.113.11')).send({ email: company.email, password: company.password });
      for (const left of ['20', '15', '10', '5', '0']) expect((await login().expect(200)).headers['x-ratelimit-remaining']).toBe(left);
      await login().expect(429);
    } finally {
      await app.close();
    }
  });
});

describe('bulk actions', () => {
  it('count one request per id: a bulk past what is left answers 429 and changes nothing', async () => {
    const app = await createTestApp({ env: { ...PROXIED, THROTTLE_LIMIT: '25' } });
    try {
      const company = await registerCompany(app.http, 'Bulky', from('203.0.113.20'));
      const key = await createApiKey(app.http, company, ['messages:write']);
      const inbound = await app.http.post('/api/external/messages').set('x-api-key', key).send({ from: { phone: '+14155550142' }, text: 'Hi' }).expect(201);
      const id = inbound.body.data.conversation.id as string;
      const others = (count: number) => Array.from({ length: count }, () => new Types.ObjectId().toHexString());
      const bulk = (body: object) => app.http.post('/v1/conversations/bulk').set(company.auth).send(body);

      const prioritised = await bulk({ action: 'set_priority', priority: 'high', ids: [id, ...others(9)] }).expect(200);
      // 1 for the key's creation, 10 for the ten ids.
      expect(prioritised.headers['x-ratelimit-remaining']).toBe('14');
      const before = await app.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
      expect(before).toMatchObject({ priority: 'high', status: 'bot' });

      const refused = await bulk({ action: 'close', ids: [id, ...others(14)] }).expect(429);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(await app.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean()).toEqual(before);
    } finally {
      await app.close();
    }
  });
});

describe('the company ceiling', () => {
  it('holds a company under THROTTLE_COMPANY_LIMIT across its agents and keys; new keys get no fresh room', async () => {
    const app = await createTestApp({ env: { ...PROXIED, THROTTLE_LIMIT: '5', THROTTLE_COMPANY_LIMIT: '8' }, controllers: [ExternalProbeController] });
    try {
      const company = await registerCompany(app.http, 'Hooli');
      const keys = [
        await createApiKey(app.http, company, ['webhooks:manage']),
        await createApiKey(app.http, company, ['webhooks:manage']),
      ];
      // 2 spent by the admin creating the keys; 5 by the first key (its own limit), 1 by the second
      for (let i = 0; i < 5; i++) await app.http.get('/api/external/rate-probe').set('x-api-key', keys[0]).expect(200);
      const last = await app.http.get('/api/external/rate-probe').set('x-api-key', keys[1]).expect(200);
      expect(last.headers).toMatchObject({ 'x-ratelimit-limit': '8', 'x-ratelimit-remaining': '0', 'ratelimit-policy': '"company";q=8;w=3600' });
      const refused = await app.http.get('/api/external/rate-probe').set('x-api-key', keys[1]).expect(429);
      expect(refused.body.error).toMatch(/^Too many requests for this company, retry after \d+ seconds?$/);
      // the admin, and a key minted now, are held by the same ceiling
      await app.http.post('/v1/api-keys').set(company.auth).send({ name: 'fresh', scopes: ['webhooks:manage'] }).expect(429);
      // another company is not
      const other = await registerCompany(app.http, 'Pied Piper', from('198.51.100.9'));
      await app.http.get('/v1/agents').set(other.auth).expect(200);
    } finally {
      await app.close();
    }
  });
});

describe('failed authentications per address', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { ...PROXIED, THROTTLE_LIMIT: '100', AUTH_FAILURE_LIMIT: '5' } });
    acme = await registerCompany(t.http, 'Acme', from('198.51.100.1'));
  });
  afterAll(() => t.close());

  /** Sends `count` requests one after the other and answers their statuses. */
  async function statuses(count: number, send: () => PromiseLike<{ status: number }>): Promise<number[]> {
    const seen: number[] = [];
    for (let i = 0; i < count; i++) seen.push((await send()).status);
    return seen;
  }

  it('40 bad bearer tokens: 401 up to AUTH_FAILURE_LIMIT, then 429, even for a good token from that address', async () => {
    const address = from('203.0.113.1');
    const seen = await statuses(40, () => t.http.get('/v1/agents').set(address).set('Authorization', 'Bearer forged.token.here'));
    expect(seen).toEqual([...Array(5).fill(401), ...Array(35).fill(429)]);
    const refused = await t.http.get('/v1/agents').set(address).set(acme.auth).expect(429);
    expect(refused.body.message).toMatch(/^Too many failed authentications from this address, retry after \d+ seconds?$/);
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0', 'ratelimit-policy': '"auth-failures";q=5;w=3600' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // another address is not held
    await t.http.get('/v1/agents').set(from('203.0.113.2')).set(acme.auth).expect(200);
  });

  it('40 bad API keys, each different: 401 up to the limit, then 429 in the envelope', async () => {
    const seen = await statuses(40, () => t.http.get('/api/external/webhooks').set(from('203.0.113.3')).set('x-api-key', `pk_guess${Math.random()}`));
    expect(seen).toEqual([...Array(5).fill(401), ...Array(35).fill(429)]);
    const refused = await t.http.get('/api/external/webhooks').set(from('203.0.113.3')).set('x-api-key', 'pk_another').expect(429);
    expect(refused.body).toEqual({ success: false, error: expect.stringMatching(/^Too many failed authentications/) });
  });

  it('wrong passwords and refused registrations count per address and e-mail; a 429 comes before the password is checked', async () => {
    const address = from('203.0.113.4');
    const wrong = await statuses(3, () => t.http.post('/v1/auth/login').set(address).send({ email: acme.email, password: 'not it at all' }));
    expect(wrong).toEqual([401, 401, 401]);
    const taken = await t.http.post('/v1/auth/register').set(address).send({ companyName: 'Again', name: 'Eve', email: acme.email, password: 'long enough password' });
    expect(taken.status).toBe(409);
    // the e-mail as written does not matter
    await t.http.post('/v1/auth/login').set(address).send({ email: acme.email.toUpperCase(), password: 'still wrong' }).expect(401);
    // five failures for this e-mail: its right password no longer gets a hearing from this address
    const refused = await t.http.post('/v1/auth/login').set(address).send({ email: acme.email, password: acme.password }).expect(429);
    expect(refused.body.message).toMatch(/^Too many failed logins for this e-mail from this address, retry after \d+ seconds?$/);
    expect(refused.headers).toMatchObject({ 'x-ratelimit-limit': '5', 'x-ratelimit-remaining': '0' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await t.http.post('/v1/auth/register').set(address).send({ companyName: 'Again', name: 'Eve', email: acme.email, password: 'long enough password' }).expect(429);
    // from another address it still logs in
    await t.http.post('/v1/auth/login').set(from('203.0.113.5')).send({ email: acme.email, password: acme.password }).expect(200);
  });

  it('locks out the guesser, not the address: other e-mails from it still log in, and still register', async () => {
    const address = from('203.0.113.6');
    const other = await registerCompany(t.http, 'Initech', from('198.51.100.2'));
    const guessed = await statuses(8, () => t.http.post('/v1/auth/login').set(address).send({ email: acme.email, password: 'a guess' }));
    expect(guessed).toEqual([...Array(5).fill(401), ...Array(3).fill(429)]);
    await t.http.post('/v1/auth/login').set(address).send({ email: other.email, password: other.password }).expect(200);
    await t.http
      .post('/v1/auth/register')
      .set(address)
      .send({ companyName: 'Newco', name: 'Ned', email: `ned-${Date.now()}@newco.example`, password: 'long enough password' })
      .expect(201);
    // an unknown e-mail counts on its own too
    const unknown = await statuses(6, () => t.http.post('/v1/auth/login').set(address).send({ email: 'nobody@nowhere.example', password: 'a guess' }));
    expect(unknown).toEqual([...Array(5).fill(401), 429]);
  });

  it('bad bearer tokens and API keys from an address do not lock its logins out', async () => {
    const address = from('203.0.113.7');
    const seen = await statuses(8, () => t.http.get('/v1/agents').set(address).set('Authorization', 'Bearer forged.token.here'));
    expect(seen).toEqual([...Array(5).fill(401), ...Array(3).fill(429)]);
    await t.http.get('/api/external/webhooks').set(address).set('x-api-key', 'pk_guess').expect(429);
    await t.http.post('/v1/auth/login').set(address).send({ email: acme.email, password: acme.password }).expect(200);
    // nor do failed logins lock the address's tokens out
    const other = from('203.0.113.8');
    await statuses(6, () => t.http.post('/v1/auth/login').set(other).send({ email: acme.email, password: 'a guess' }));
    await t.http.get('/v1/agents').set(other).set(acme.auth).expect(200);
  });
});

describe('TRUST_PROXY', () => {
  const login = (app: TestApp, forwardedFor: string) =>
    app.http.post('/v1/auth/login').set('X-Forwarded-For', forwardedFor).send({ email: 'nobody@example.com', password: 'wrong password' });

  it('off (the default): X-Forwarded-For is ignored, every client behind one socket address shares its bucket', async () => {
    const app = await createTestApp({ env: { THROTTLE_TTL_MS: HOUR, AUTH_FAILURE_LIMIT: '3' } });
    try {
      expect((await login(app, '198.51.100.1')).status).toBe(401);
      expect((await login(app, '198.51.100.2')).status).toBe(401);
      expect((await login(app, '198.51.100.3')).status).toBe(401);
      expect((await login(app, '198.51.100.4')).status).toBe(429);
    } finally {
      await app.close();
    }
  });

  it('a hop count: the address the trusted proxy saw is the client, whatever the client put before it', async () => {
    const app = await createTestApp({ env: { THROTTLE_TTL_MS: HOUR, AUTH_FAILURE_LIMIT: '2', TRUST_PROXY: '1' } });
    try {
      expect((await login(app, '198.51.100.1')).status).toBe(401);
      expect((await login(app, '198.51.100.1')).status).toBe(401);
      expect((await login(app, '198.51.100.1')).status).toBe(429);
      // a made-up address put in front by the client does not give it a fresh bucket
      expect((await login(app, '10.9.9.9, 198.51.100.1')).status).toBe(429);
      expect((await login(app, '198.51.100.2')).status).toBe(401);
    } finally {
      await app.close();
    }
  });

  it('a list of proxy addresses (CIDR): only requests through them are attributed to the forwarded address', async () => {
    const trusted = await createTestApp({ env: { THROTTLE_TTL_MS: HOUR, AUTH_FAILURE_LIMIT: '1', TRUST_PROXY: '127.0.0.0/8, ::1/128' } });
    const untrusted = await createTestApp({ env: { THROTTLE_TTL_MS: HOUR, AUTH_FAILURE_LIMIT: '1', TRUST_PROXY: '10.0.0.0/8' } });
    try {
      expect((await login(trusted, '198.51.100.1')).status).toBe(401);
      expect((await login(trusted, '198.51.100.2')).status).toBe(401);
      expect((await login(trusted, '198.51.100.1')).status).toBe(429);
      expect((await login(untrusted, '198.51.100.1')).status).toBe(401);
      expect((await login(untrusted, '198.51.100.2')).status).toBe(429);
    } finally {
      await trusted.close();
      await untrusted.close();
    }
  });
});
