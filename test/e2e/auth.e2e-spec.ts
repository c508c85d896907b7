import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import jwt from 'jsonwebtoken';
import { Agent } from '../../src/agents/agent.schema.js';
import type { ApiKeyPrincipal } from '../../src/auth/auth-principal.js';
import { ApiKeyAuth } from '../../src/auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../../src/auth/decorators/principal.decorator.js';
import { RequireRole } from '../../src/auth/decorators/require-role.decorator.js';
import { RequireScopes } from '../../src/auth/decorators/require-scopes.decorator.js';
import { addAgent, createApiKey, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, TEST_JWT_SECRET, type TestApp } from '../support/test-app.js';
import { signToken } from '../support/tokens.js';

/** Test-only routes: one per guard rule, so each outcome is asserted on a real request. */
// Test-only routes stay out of the document, and so out of its answers' check (test-app.ts).
@ApiExcludeController()
@Controller('guard-probe')
class GuardProbeController {
  @Get('supervisor')
  @RequireRole('supervisor')
  supervisorOnly() {
    return { ok: true };
  }
}

@ApiExcludeController()
@ApiKeyAuth()
@Controller({ path: 'api/external/guard-probe', version: VERSION_NEUTRAL })
class ExternalGuardProbeController {
  @Get()
  @RequireScopes('webhooks:manage')
  probe(@CurrentApiKey() key: ApiKeyPrincipal) {
    return { success: true, data: { companyId: key.companyId } };
  }
}

describe('authentication and permissions', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ controllers: [GuardProbeController, ExternalGuardProbeController] });
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  describe('POST /v1/auth/register', () => {
    it('creates the company, its settings and an admin, and answers a working token', async () => {
      const email = uniqueEmail('founder');
      const response = await t.http
        .post('/v1/auth/register')
        .send({ companyName: 'Globex', name: 'Hank', email, password: 'long enough password' })
        .expect(201);
      expect(response.body).toMatchObject({
        tokenType: 'Bearer',
        expiresIn: 3600,
        agent: { name: 'Hank', email, role: 'admin', isActive: true },
        company: { name: 'Globex' },
      });
      expect(response.body.agent).not.toHaveProperty('passwordHash');
      const claims = jwt.verify(response.body.accessToken, TEST_JWT_SECRET) as Record<string, unknown>;
      expect(claims).toMatchObject({ sub: response.body.agent.id, companyId: response.body.company.id, role: 'admin' });
      expect(Number(claims.exp) - Number(claims.iat)).toBe(3600);
      const settings = await t.model('Settings').countDocuments({ companyId: response.body.company.id });
      expect(settings).toBe(1);
      await t.http.get('/v1/api-keys').set('Authorization', `Bearer ${response.body.accessToken}`).expect(200);
    });

    it('refuses an e-mail that can already log in with 409, and leaves no orphan company', async () => {
      const before = await t.model('Company').countDocuments({});
      const response = await t.http
        .post('/v1/auth/register')
        .send({ companyName: 'Copycat', name: 'Eve', email: acme.email.toUpperCase(), password: 'long enough password' })
        .expect(409);
      // The answer does not say why: a taken e-mail and any other refusal read the same.
      expect(response.body.message).toBe('Registration could not be completed with these details');
      expect(response.body.detail).not.toMatch(/e-mail|email|exists|taken/i);
      expect(await t.model('Company').countDocuments({})).toBe(before);
    });

    it('validates every field and lists the problems', async () => {
      const response = await t.http
        .post('/v1/auth/register')
        .send({ companyName: '', name: 42, email: 'not-an-email', password: 'short' })
        .expect(400);
      const fields = (response.body.errors as { field: string }[]).map((problem) => problem.field).sort();
      expect([...new Set(fields)]).toEqual(['companyName', 'email', 'name', 'password']);
    });
  });

  describe('POST /v1/auth/login', () => {
    it('answers a token for the right password, case-insensitive e-mail', async () => {
      const response = await t.http
        .post('/v1/auth/login')
        .send({ email: acme.email.toUpperCase(), password: acme.password })
        .expect(200);
      expect(response.body).toMatchObject({ tokenType: 'Bearer', agent: { id: acme.agentId, role: 'admin' } });
      expect(response.body).not.toHaveProperty('company');
    });

    it('answers 401 for a wrong password and for an unknown e-mail, with the same message', async () => {
      const wrong = await t.http.post('/v1/auth/login').send({ email: acme.email, password: 'wrong password' }).expect(401);
      const unknown = await t.http
        .post('/v1/auth/login')
        .send({ email: uniqueEmail('nobody'), password: 'whatever it is' })
        .expect(401);
      expect(wrong.body.message).toBe('Invalid e-mail or password');
      expect(unknown.body.message).toBe(wrong.body.message);
    });
  });

  describe('bearer token guard', () => {
    it('401 without a token', async () => {
      const response = await t.http.get('/v1/api-keys').expect(401);
      expect(response.body.message).toBe('Missing bearer token');
    });

    it('401 with a token signed by another secret, or garbage', async () => {
      const forged = jwt.sign({ sub: acme.agentId, companyId: acme.companyId, role: 'admin' }, 'another secret');
      await t.http.get('/v1/api-keys').set('Authorization', `Bearer ${forged}`).expect(401);
      await t.http.get('/v1/api-keys').set('Authorization', 'Bearer not.a.jwt').expect(401);
      await t.http.get('/v1/api-keys').set('Authorization', acme.token).expect(401);
    });

    it('401 with an expired token', async () => {
      const expired = jwt.sign(
        { sub: acme.agentId, companyId: acme.companyId, role: 'admin', exp: Math.floor(Date.now() / 1000) - 10 },
        TEST_JWT_SECRET,
      );
      const response = await t.http.get('/v1/api-keys').set('Authorization', `Bearer ${expired}`).expect(401);
      expect(response.body.message).toBe('The bearer token has expired');
    });

    it('401 with a token of another algorithm (alg none)', async () => {
      const unsigned = jwt.sign({ sub: acme.agentId, companyId: acme.companyId, role: 'admin' }, '', {
        algorithm: 'none',
      });
      await t.http.get('/v1/api-keys').set('Authorization', `Bearer ${unsigned}`).expect(401);
    });

    it('refuses the token of an agent deactivated after it was issued, from the next request on', async () => {
      const supervisor = await addAgent(t, acme, 'supervisor');
      await t.http.get('/v1/guard-probe/supervisor').set(supervisor.auth).expect(200);
      await t.model<Agent>(Agent.name).updateOne({ _id: supervisor.agentId, companyId: acme.companyId }, { isActive: false });
      const response = await t.http.get('/v1/guard-probe/supervisor').set(supervisor.auth).expect(401);
      expect(response.body.message).toMatch(/deactivated/);
      await t.http.post('/v1/auth/login').send({ email: supervisor.email, password: supervisor.password }).expect(401);
    });

    it('takes the role from the agent record, not from the token', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const promoted = signToken({ sub: agent.agentId, companyId: acme.companyId, role: 'admin', ver: 0 });
      await t.http.get('/v1/api-keys').set('Authorization', `Bearer ${promoted}`).expect(403);
    });
  });

  describe('roles', () => {
    it('403 for a role below the one required; the same or higher passes', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const supervisor = await addAgent(t, acme, 'supervisor');
      const response = await t.http.get('/v1/guard-probe/supervisor').set(agent.auth).expect(403);
      expect(response.body.message).toBe('This action requires the supervisor role');
      await t.http.get('/v1/guard-probe/supervisor').set(supervisor.auth).expect(200);
      await t.http.get('/v1/guard-probe/supervisor').set(acme.auth).expect(200);
      await t.http.post('/v1/api-keys').set(supervisor.auth).send({ name: 'x', scopes: ['messages:write'] }).expect(403);
    });
  });

  describe('API key guard (Interface B)', () => {
    it('401 in the envelope without a key', async () => {
      const response = await t.http.get('/api/external/guard-probe').expect(401);
      expect(response.body).toEqual({ success: false, error: 'Missing API key (x-api-key header)' });
    });

    it('401 for an unknown key and for a revoked one', async () => {
      await t.http.get('/api/external/guard-probe').set('x-api-key', 'pk_unknown').expect(401);
      const created = await t.http
        .post('/v1/api-keys')
        .set(acme.auth)
        .send({ name: 'soon revoked', scopes: ['webhooks:manage'] })
        .expect(201);
      await t.http.get('/api/external/guard-probe').set('x-api-key', created.body.key).expect(200);
      await t.http.delete(`/v1/api-keys/${created.body.id}`).set(acme.auth).expect(200);
      const response = await t.http.get('/api/external/guard-probe').set('x-api-key', created.body.key).expect(401);
      expect(response.body).toEqual({ success: false, error: 'Invalid or revoked API key' });
    });

    it('403 for a key without the scope', async () => {
      const key = await createApiKey(t.http, acme, ['messages:write']);
      const response = await t.http.get('/api/external/guard-probe').set('x-api-key', key).expect(403);
      expect(response.body).toEqual({ success: false, error: 'The API key lacks the scope webhooks:manage' });
    });

    it('authenticates as the key\'s company; a bearer token is not a key', async () => {
      const key = await createApiKey(t.http, acme, ['webhooks:manage']);
      const response = await t.http.get('/api/external/guard-probe').set('x-api-key', key).expect(200);
      expect(response.body).toEqual({ success: true, data: { companyId: acme.companyId } });
      await t.http.get('/api/external/guard-probe').set(acme.auth).expect(401);
    });

    it('a key does not open Interface A', async () => {
      const key = await createApiKey(t.http, acme, ['webhooks:manage', 'messages:write']);
      await t.http.get('/v1/api-keys').set('x-api-key', key).expect(401);
    });
  });
});
