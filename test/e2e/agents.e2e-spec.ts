import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent } from '../../src/agents/agent.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { addAgent, createApiKey, registerCompany, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface AgentBody {
  id: string;
  name: string;
  email: string;
  role: string;
  status: string;
  isActive: boolean;
}

describe('/v1/agents', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let acmeKey: string;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
    acmeKey = await createApiKey(t.http, acme, ['messages:write']);
  });
  afterAll(() => t.close());

  const createAgent = async (company: TestCompany, body: Record<string, unknown> = {}): Promise<AgentBody> => {
    const response = await t.http
      .post('/v1/agents')
      .set(company.auth)
      .send({ name: 'Grace', email: uniqueEmail('grace'), ...body })
      .expect(201);
    return response.body as AgentBody;
  };

  /** A new conversation in `bot`, opened by a customer's inbound message. */
  const openConversation = async (): Promise<string> => {
    const response = await t.http
      .post('/api/external/messages')
      .set('x-api-key', acmeKey)
      .send({ from: { email: uniqueEmail('customer') }, text: 'hello' })
      .expect(201);
    return response.body.data.conversation.id as string;
  };

  const storedAgent = (id: string) => t.model<Agent>(Agent.name).findOne({ _id: id, companyId: acme.companyId }).lean();

  describe('POST', () => {
    it('creates an agent with defaults; with a password it can log in', async () => {
      const email = uniqueEmail('ada');
      const response = await t.http
        .post('/v1/agents')
        .set(acme.auth)
        .send({ name: 'Ada', email: email.toUpperCase(), password: 'a good long password' })
        .expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'Ada',
        email,
        role: 'agent',
        status: 'offline',
        isActive: true,
        capacity: null,
        capacityByChannel: {},
        skills: [],
        load: { total: 0, byChannel: {} },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const stored = await t.model<Agent>(Agent.name).findOne({ _id: response.body.id, companyId: acme.companyId }).select('+passwordHash').lean();
      expect(stored?.passwordHash).toMatch(/^scrypt\$/);
      const login = await t.http.post('/v1/auth/login').send({ email, password: 'a good long password' }).expect(200);
      expect(login.body.agent.id).toBe(response.body.id);
    });

    it('creates an agent without a password that cannot log in', async () => {
      const created = await createAgent(acme, { role: 'supervisor', status: 'away' });
      expect(created).toMatchObject({ role: 'supervisor', status: 'away', isActive: true });
      await t.http.post('/v1/auth/login').send({ email: created.email, password: 'whatever password' }).expect(401);
    });

    it('refuses a duplicate e-mail in the company, and a login e-mail of another company, with 409', async () => {
      const first = await createAgent(acme);
      const duplicate = await t.http
        .post('/v1/agents')
        .set(acme.auth)
        .send({ name: 'Again', email: first.email.toUpperCase() })
        .expect(409);
      expect(duplicate.body.message).toMatch(/already exists in this company/);

      const loginEmail = await t.http
        .post('/v1/agents')
        .set(globex.auth)
        .send({ name: 'Copy', email: acme.email, password: 'a good long password' })
        .expect(409);
      expect(loginEmail.body.message).toMatch(/can already log in/);
      // Without a password the same person may be listed in another company.
      await t.http.post('/v1/agents').set(globex.auth).send({ name: 'Copy', email: acme.email }).expect(201);
      expect(await t.model<Agent>(Agent.name).countDocuments({ companyId: acme.companyId, email: first.email })).toBe(1);
    });

    it('validates the body', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ email: uniqueEmail() }, 'name'],
        [{ name: '', email: uniqueEmail() }, 'name'],
        [{ name: 'X', email: 'not-an-email' }, 'email'],
        [{ name: 'X', email: uniqueEmail(), role: 'owner' }, 'role'],
        [{ name: 'X', email: uniqueEmail(), status: 'asleep' }, 'status'],
        [{ name: 'X', email: uniqueEmail(), password: 'short' }, 'password'],
        [{ name: 42, email: uniqueEmail() }, 'name'],
        [{ name: 'X', email: uniqueEmail(), isAdmin: true }, 'isAdmin'],
      ];
      for (const [body, field] of cases) {
        const response = await t.http.post('/v1/agents').set(acme.auth).send(body).expect(400);
        expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
      }
      await t.http.post('/v1/agents').set(acme.auth).send({ name: 'X', email: { $gt: '' } }).expect(400);
    });

    it('is for admins only', async () => {
      for (const role of ['agent', 'supervisor'] as const) {
        const who = await addAgent(t, acme, role);
        const email = uniqueEmail();
        await t.http.post('/v1/agents').set(who.auth).send({ name: 'X', email }).expect(403);
        expect(await t.model<Agent>(Agent.name).countDocuments({ companyId: acme.companyId, email })).toBe(0);
      }
    });
  });

  describe('GET', () => {
    let company: TestCompany;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      company = await registerCompany(t.http, 'Initech');
      ids.admin = company.agentId;
      ids.online = (await createAgent(company, { status: 'online' })).id;
      ids.away = (await createAgent(company, { status: 'away' })).id;
      ids.busy = (await createAgent(company, { status: 'busy' })).id;
      ids.offline = (await createAgent(company)).id;
      ids.gone = (await createAgent(company, { status: 'online' })).id;
      await t.http.delete(`/v1/agents/${ids.gone}`).set(company.auth).expect(200);
    });

    const list = async (query: Record<string, string | number>) => {
      const response = await t.http.get('/v1/agents').query(query).set(company.auth).expect(200);
      return (response.body.data as AgentBody[]).map((agent) => agent.id);
    };

    it('lists newest first, deactivated agents included', async () => {
      expect(await list({})).toEqual([ids.gone, ids.offline, ids.busy, ids.away, ids.online, ids.admin]);
    });

    it('filters by status and isActive', async () => {
      expect(await list({ status: 'online' })).toEqual([ids.online, ids.admin]);
      expect(await list({ status: 'offline' })).toEqual([ids.gone, ids.offline]);
      expect(await list({ isActive: 'false' })).toEqual([ids.gone]);
      expect(await list({ isActive: 'true' })).toEqual([ids.offline, ids.busy, ids.away, ids.online, ids.admin]);
      expect(await list({ isActive: 'true', status: 'offline' })).toEqual([ids.offline]);
    });

    it('pages with a cursor', async () => {
      const first = await t.http.get('/v1/agents').query({ limit: 4 }).set(company.auth).expect(200);
      expect(first.body.data).toHaveLength(4);
      const second = await t.http
        .get('/v1/agents')
        .query({ limit: 4, cursor: first.body.nextCursor })
        .set(company.auth)
        .expect(200);
      expect(second.body.nextCursor).toBeNull();
      expect([...first.body.data, ...second.body.data].map((agent: AgentBody) => agent.id)).toEqual(await list({}));
    });

    it('refuses bad filters', async () => {
      for (const query of [{ status: 'asleep' }, { isActive: 'yes' }, { limit: 0 }, { limit: 101 }, { cursor: 'nope' }]) {
        await t.http.get('/v1/agents').query(query).set(company.auth).expect(400);
      }
      await t.http.get('/v1/agents?status[$ne]=online').set(company.auth).expect(400);
    });

    it('answers one agent, to any role; another company’s or a malformed id is a 404', async () => {
      const reader = await addAgent(t, company, 'agent');
      const one = await t.http.get(`/v1/agents/${ids.away}`).set(reader.auth).expect(200);
      expect(one.body).toMatchObject({ id: ids.away, status: 'away', isActive: true });
      expect(one.body).not.toHaveProperty('passwordHash');
      const foreign = await t.http.get(`/v1/agents/${ids.away}`).set(acme.auth).expect(404);
      expect(foreign.body).not.toHaveProperty('name');
      await t.http.get('/v1/agents/not-an-id').set(company.auth).expect(404);
      expect((await t.http.get('/v1/agents').set(acme.auth).expect(200)).body.data.map((a: AgentBody) => a.id)).not.toContain(ids.away);
    });
  });

  describe('me', () => {
    it('GET /v1/agents/me answers the calling agent, whatever its role', async () => {
      const reader = await addAgent(t, acme, 'agent');
      const me = await t.http.get('/v1/agents/me').set(reader.auth).expect(200);
      expect(me.body).toMatchObject({ id: reader.agentId, role: 'agent', isActive: true });
      expect(me.body).not.toHaveProperty('passwordHash');
      expect((await t.http.get('/v1/agents/me').set(acme.auth).expect(200)).body).toMatchObject({ id: acme.agentId, role: 'admin' });
      await t.http.get('/v1/agents/me').expect(401);
      await t.http.get('/v1/agents/me').set('x-api-key', acmeKey).expect(401);
    });

    it('PATCH /v1/agents/me changes the caller (an agent its own status)', async () => {
      const reader = await addAgent(t, acme, 'agent');
      const patched = await t.http.patch('/v1/agents/me').set(reader.auth).send({ status: 'away' }).expect(200);
      expect(patched.body).toMatchObject({ id: reader.agentId, status: 'away' });
      await t.http.patch('/v1/agents/me').set(reader.auth).send({ role: 'admin' }).expect(403);
    });
  });

  describe('PATCH', () => {
    it('lets an admin change name, role, status and password', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const response = await t.http
        .patch(`/v1/agents/${agent.agentId}`)
        .set(acme.auth)
        .send({ name: 'Renamed', role: 'supervisor', status: 'busy', password: 'a brand new password' })
        .expect(200);
      expect(response.body).toMatchObject({ id: agent.agentId, name: 'Renamed', role: 'supervisor', status: 'busy' });
      await t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(401);
      const login = await t.http.post('/v1/auth/login').send({ email: agent.email, password: 'a brand new password' }).expect(200);
      // A new password and role end the earlier tokens; the new login has the new role.
      await t.http.post('/v1/flows').set(agent.auth).send({ name: 'x', steps: [{ type: 'handoff' }] }).expect(401);
      await t.http
        .post('/v1/flows')
        .set('Authorization', `Bearer ${login.body.accessToken}`)
        .send({ name: 'x', steps: [{ type: 'handoff' }] })
        .expect(201);
    });

    it('lets an agent change its own status, and nothing else', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const other = await addAgent(t, acme, 'agent');
      const own = await t.http.patch(`/v1/agents/${agent.agentId}`).set(agent.auth).send({ status: 'away' }).expect(200);
      expect(own.body.status).toBe('away');
      const rename = await t.http.patch(`/v1/agents/${agent.agentId}`).set(agent.auth).send({ name: 'Boss' }).expect(403);
      expect(rename.body.message).toMatch(/name/);
      await t.http.patch(`/v1/agents/${agent.agentId}`).set(agent.auth).send({ role: 'admin' }).expect(403);
      await t.http.patch(`/v1/agents/${other.agentId}`).set(agent.auth).send({ status: 'offline' }).expect(403);
      const supervisor = await addAgent(t, acme, 'supervisor');
      await t.http.patch(`/v1/agents/${other.agentId}`).set(supervisor.auth).send({ status: 'offline' }).expect(403);
      expect(await storedAgent(agent.agentId)).toMatchObject({ name: 'A agent', role: 'agent', status: 'away' });
      expect((await storedAgent(other.agentId))?.status).toBe('online');
    });

    it('changes nothing for an empty body', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const before = await t.http.get(`/v1/agents/${agent.agentId}`).set(acme.auth).expect(200);
      const response = await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({}).expect(200);
      // The single GET adds the agent's teams.
      const { teamIds, ...agentFields } = before.body;
      expect(teamIds).toEqual([]);
      expect(response.body).toEqual(agentFields);
    });

    it('validates the body; null is refused', async () => {
      const agent = await addAgent(t, acme, 'agent');
      for (const body of [{ status: 'asleep' }, { role: 'owner' }, { name: null }, { password: 'short' }, { email: 'x@y.z' }, { isActive: 'no' }]) {
        await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send(body).expect(400);
      }
      await t.http.patch(`/v1/agents/${agent.agentId}`).set(globex.auth).send({ status: 'away' }).expect(404);
      await t.http.patch('/v1/agents/123').set(acme.auth).send({ status: 'away' }).expect(404);
    });

    it('refuses a password for an e-mail that can log in to another company', async () => {
      const globexOnly = await createAgent(globex, { email: uniqueEmail('shared') });
      const acmeLogin = await createAgent(acme, { email: globexOnly.email, password: 'a good long password' });
      expect(acmeLogin.email).toBe(globexOnly.email);
      await t.http.patch(`/v1/agents/${globexOnly.id}`).set(globex.auth).send({ password: 'another long one' }).expect(409);
      await t.http.patch(`/v1/agents/${acmeLogin.id}`).set(acme.auth).send({ password: 'another long one' }).expect(200);
    });
  });

  describe('DELETE (deactivation)', () => {
    it('deactivates: record kept, tokens and login refused, open human conversations back to the queue', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const [first, second, third] = [await openConversation(), await openConversation(), await openConversation()];
      for (const id of [first, second, third]) {
        await t.http.post(`/v1/conversations/${id}/assign`).set(acme.auth).send({ agentId: agent.agentId }).expect(200);
      }
      await t.http.post(`/v1/conversations/${third}/close`).set(acme.auth).send({}).expect(200);
      await t.http.get('/v1/agents').set(agent.auth).expect(200);

      const response = await t.http.delete(`/v1/agents/${agent.agentId}`).set(acme.auth).expect(200);
      expect(response.body).toMatchObject({ id: agent.agentId, isActive: false, status: 'offline' });

      expect(await storedAgent(agent.agentId)).toMatchObject({ isActive: false, status: 'offline' });
      const refused = await t.http.get('/v1/agents').set(agent.auth).expect(401);
      expect(refused.body.message).toMatch(/deactivated/);
      await t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(401);

      const conversations = await t
        .model<Conversation>(Conversation.name)
        .find({ companyId: acme.companyId, _id: { $in: [first, second, third] } })
        .lean();
      const byId = new Map(conversations.map((conversation) => [conversation._id.toHexString(), conversation]));
      for (const id of [first, second]) {
        expect(byId.get(id)).toMatchObject({ status: 'queued', assignedAgentId: null });
      }
      expect(byId.get(third)?.status).toBe('closed');

      const inactive = await t.http.get('/v1/agents').query({ isActive: 'false' }).set(acme.auth).expect(200);
      expect(inactive.body.data.map((a: AgentBody) => a.id)).toContain(agent.agentId);
      const again = await t.http.delete(`/v1/agents/${agent.agentId}`).set(acme.auth).expect(200);
      expect(again.body).toMatchObject({ id: agent.agentId, isActive: false });
      await t.http
        .post(`/v1/conversations/${first}/assign`)
        .set(acme.auth)
        .send({ agentId: agent.agentId })
        .expect(400);
    });

    it('reactivates with PATCH isActive: true; a deactivated agent stays offline', async () => {
      const agent = await addAgent(t, acme, 'agent');
      await t.http.delete(`/v1/agents/${agent.agentId}`).set(acme.auth).expect(200);
      await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ status: 'online' }).expect(400);
      const back = await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ isActive: true }).expect(200);
      expect(back.body).toMatchObject({ isActive: true, status: 'offline' });
      await t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(200);
      const off = await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ isActive: false }).expect(200);
      expect(off.body).toMatchObject({ isActive: false, status: 'offline' });
    });

    it('is for admins only, and 404 for another company’s agent', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const supervisor = await addAgent(t, acme, 'supervisor');
      await t.http.delete(`/v1/agents/${agent.agentId}`).set(supervisor.auth).expect(403);
      await t.http.delete(`/v1/agents/${agent.agentId}`).set(agent.auth).expect(403);
      await t.http.delete(`/v1/agents/${agent.agentId}`).set(globex.auth).expect(404);
      await t.http.delete('/v1/agents/zzz').set(acme.auth).expect(404);
      expect((await storedAgent(agent.agentId))?.isActive).toBe(true);
    });

    it('keeps at least one active admin (409), and lets one of two admins go', async () => {
      const company = await registerCompany(t.http, 'Solo');
      const self = await t.http.delete(`/v1/agents/${company.agentId}`).set(company.auth).expect(409);
      expect(self.body.message).toMatch(/at least one active admin/);
      await t.http.patch(`/v1/agents/${company.agentId}`).set(company.auth).send({ role: 'agent' }).expect(409);
      await t.http.patch(`/v1/agents/${company.agentId}`).set(company.auth).send({ isActive: false }).expect(409);
      const stored = await t.model<Agent>(Agent.name).findOne({ _id: company.agentId, companyId: company.companyId }).lean();
      expect(stored).toMatchObject({ role: 'admin', isActive: true });

      const second = await addAgent(t, company, 'admin');
      await t.http.delete(`/v1/agents/${company.agentId}`).set(second.auth).expect(200);
      await t.http.delete(`/v1/agents/${second.agentId}`).set(second.auth).expect(409);
      await t.http.get('/v1/agents').set(company.auth).expect(401);
    });

    it('two admins deactivating each other at once leave one admin', async () => {
      const company = await registerCompany(t.http, 'Duo');
      const other = await addAgent(t, company, 'admin');
      const results = await Promise.all([
        t.http.delete(`/v1/agents/${other.agentId}`).set(company.auth),
        t.http.delete(`/v1/agents/${company.agentId}`).set(other.auth),
      ]);
      expect(results.map((response) => response.status).sort()).toEqual(expect.arrayContaining([409]));
      const admins = await t.model<Agent>(Agent.name).countDocuments({ companyId: company.companyId, role: 'admin', isActive: true });
      expect(admins).toBeGreaterThanOrEqual(1);
    });
  });
});
