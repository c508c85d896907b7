import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { randomBytes, scryptSync } from 'node:crypto';
import { Agent } from '../../src/agents/agent.schema.js';
import { addAgent, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, TEST_JWT_SECRET, type TestApp } from '../support/test-app.js';
import { signToken } from '../support/tokens.js';

const now = () => Math.floor(Date.now() / 1000);

describe('bearer tokens: required claims, age and versions', () => {
  let t: TestApp;
  let acme: TestCompany;
  let base: Record<string, unknown>;
  const call = (token: string) => t.http.get('/v1/api-keys').set('Authorization', `Bearer ${token}`);

  beforeAll(async () => {
    t = await createTestApp({ env: { JWT_EXPIRES_IN: '1h', JWT_MAX_AGE: '2h' } });
    acme = await registerCompany(t.http, 'Acme');
    base = { sub: acme.agentId, companyId: acme.companyId, role: 'admin', ver: 0 };
  });
  afterAll(() => t.close());

  it('issues tokens with iss, aud, iat, exp and the agent token version', async () => {
    const claims = jwt.verify(acme.token, TEST_JWT_SECRET) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: 'parley', aud: 'parley-api', ver: 0, sub: acme.agentId });
    expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
    await call(signToken(base)).expect(200);
  });

  it('refuses a correctly signed token without exp, or without iat', async () => {
    const noExp = jwt.sign({ ...base, iat: now() }, TEST_JWT_SECRET, { issuer: 'parley', audience: 'parley-api' });
    expect((jwt.decode(noExp) as Record<string, unknown>).exp).toBeUndefined();
    const refused = await call(noExp).expect(401);
    expect(refused.body.message).toMatch(/bearer token/i);
    const noIat = signToken(base, { noTimestamp: true });
    expect((jwt.decode(noIat) as Record<string, unknown>).iat).toBeUndefined();
    await call(noIat).expect(401);
  });

  it('refuses a token older than JWT_MAX_AGE whatever its exp says', async () => {
    const old = jwt.sign({ ...base, iat: now() - 3 * 3600, exp: now() + 3600 }, TEST_JWT_SECRET, { issuer: 'parley', audience: 'parley-api' });
    const refused = await call(old).expect(401);
    expect(refused.body.message).toBe('The bearer token has expired');
    const young = jwt.sign({ ...base, iat: now() - 3600, exp: now() + 3600 }, TEST_JWT_SECRET, { issuer: 'parley', audience: 'parley-api' });
    await call(young).expect(200);
  });

  it('refuses a token issued more than 60 s in the future, which would otherwise outlive JWT_MAX_AGE', async () => {
    const sign = (iat: number) => jwt.sign({ ...base, iat, exp: iat + 3600 }, TEST_JWT_SECRET, { issuer: 'parley', audience: 'parley-api' });
    const refused = await call(sign(now() + 86_400)).expect(401);
    expect(refused.body.message).toBe('The bearer token was issued in the future (iat)');
    await call(sign(now() + 90)).expect(401);
    // a few seconds of clock skew between processes is fine
    await call(sign(now() + 5)).expect(200);
  });

  it('refuses another issuer or audience, and a token without a version', async () => {
    await call(signToken(base, { issuer: 'someone-else' })).expect(401);
    await call(signToken(base, { audience: 'another-api' })).expect(401);
    const { ver: _ver, ...unversioned } = base;
    await call(signToken(unversioned)).expect(401);
  });

  it('ends the tokens issued before a password change; the new password logs in', async () => {
    const agent = await addAgent(t, acme, 'supervisor');
    await t.http.get('/v1/agents').set(agent.auth).expect(200);
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ password: 'a brand new password' }).expect(200);
    const refused = await t.http.get('/v1/agents').set(agent.auth).expect(401);
    expect(refused.body.message).toMatch(/password, role or status changed/);
    await t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(401);
    const login = await t.http.post('/v1/auth/login').send({ email: agent.email, password: 'a brand new password' }).expect(200);
    await t.http.get('/v1/agents').set('Authorization', `Bearer ${login.body.accessToken}`).expect(200);
  });

  it('ends the tokens issued before a role change, and before a deactivation once reactivated', async () => {
    const agent = await addAgent(t, acme, 'agent');
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ role: 'supervisor' }).expect(200);
    await t.http.get('/v1/agents').set(agent.auth).expect(401);

    const other = await addAgent(t, acme, 'agent');
    await t.http.delete(`/v1/agents/${other.agentId}`).set(acme.auth).expect(200);
    await t.http.patch(`/v1/agents/${other.agentId}`).set(acme.auth).send({ isActive: true }).expect(200);
    const refused = await t.http.get('/v1/agents').set(other.auth).expect(401);
    expect(refused.body.message).toMatch(/password, role or status changed/);
    const login = await t.http.post('/v1/auth/login').send({ email: other.email, password: other.password }).expect(200);
    await t.http.get('/v1/agents').set('Authorization', `Bearer ${login.body.accessToken}`).expect(200);
  });

  it('keeps the tokens of an agent whose name or status changed', async () => {
    const agent = await addAgent(t, acme, 'agent');
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ name: 'Renamed', status: 'away' }).expect(200);
    await t.http.get('/v1/agents').set(agent.auth).expect(200);
  });

  it('answers 401 with a Bearer challenge on Interface A and an ApiKey challenge on Interface B', async () => {
    const missing = await t.http.get('/v1/agents').expect(401);
    expect(missing.headers['www-authenticate']).toBe('Bearer realm="parley"');
    const invalid = await t.http.get('/v1/agents').set('Authorization', 'Bearer nope').expect(401);
    expect(invalid.headers['www-authenticate']).toBe('Bearer realm="parley", error="invalid_token"');
    const login = await t.http.post('/v1/auth/login').send({ email: acme.email, password: 'not the password' }).expect(401);
    expect(login.headers['www-authenticate']).toBe('Bearer realm="parley"');
    const external = await t.http.get('/api/external/webhooks').expect(401);
    expect(external.headers['www-authenticate']).toBe('ApiKey header="x-api-key"');
    const badKey = await t.http.get('/api/external/webhooks').set('x-api-key', 'pk_nope').expect(401);
    expect(badKey.headers['www-authenticate']).toBe('ApiKey header="x-api-key"');
    const allowed = await t.http.get('/v1/agents').set(acme.auth).expect(200);
    expect(allowed.headers['www-authenticate']).toBeUndefined();
  });

  it('marks answers that carry a token no-store', async () => {
    const login = await t.http.post('/v1/auth/login').send({ email: acme.email, password: acme.password }).expect(200);
    expect(login.headers['cache-control']).toBe('no-store');
    const register = await t.http
      .post('/v1/auth/register')
      .send({ companyName: 'Initech', name: 'Bill', email: uniqueEmail('bill'), password: 'long enough password' })
      .expect(201);
    expect(register.headers['cache-control']).toBe('no-store');
  });
});

describe('password hashes', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { PASSWORD_SCRYPT_LOG_N: '17' } });
  });
  afterAll(() => t.close());

  it('hashes at N = 2^17 and upgrades an older, cheaper hash at the next login', async () => {
    const company = await registerCompany(t.http, 'Legacy');
    const agents = t.model<Agent>(Agent.name);
    const stored = await agents.findOne({ _id: company.agentId, companyId: company.companyId }).select('+passwordHash').lean();
    expect(stored?.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);

    const salt = randomBytes(16);
    const legacy = ['scrypt', 16384, 8, 1, salt.toString('base64'), scryptSync(company.password, salt, 32, { N: 16384, r: 8, p: 1 }).toString('base64')].join('$');
    await agents.updateOne({ _id: company.agentId, companyId: company.companyId }, { $set: { passwordHash: legacy } });

    const login = await t.http.post('/v1/auth/login').send({ email: company.email, password: company.password }).expect(200);
    const upgraded = await agents.findOne({ _id: company.agentId, companyId: company.companyId }).select('+passwordHash').lean();
    expect(upgraded?.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(upgraded?.passwordHash).not.toBe(legacy);
    // Stored again by the login's own write, which counts it.
    expect(upgraded?.loginCount).toBe(1);
    // The same password, so the session stays: the token of that login works and the next login too.
    await t.http.get('/v1/agents').set('Authorization', `Bearer ${login.body.accessToken}`).expect(200);
    await t.http.post('/v1/auth/login').send({ email: company.email, password: company.password }).expect(200);
    await t.http.post('/v1/auth/login').send({ email: company.email, password: 'wrong password' }).expect(401);
  });
});
