import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Agent } from '../../src/agents/agent.schema.js';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { addAgent, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Bearer requests read their agent from memory; every change to agents in the process applies at once. */
describe('the agent of a bearer token, from memory', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  it('reads the agent once for many requests with its token', async () => {
    const agent = await addAgent(t, acme, 'agent');
    const reads = jest.spyOn(t.app.get(AgentsRepository), 'findById');
    try {
      for (let i = 0; i < 5; i++) await t.http.get('/v1/settings').set(agent.auth).expect(200);
      expect(reads.mock.calls.filter(([, id]) => id === agent.agentId)).toHaveLength(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('applies a promotion and a demotion through the API to the very next request: the earlier tokens end', async () => {
    const agent = await addAgent(t, acme, 'agent');
    const login = () => t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(200);
    await t.http.get('/v1/api-keys').set(agent.auth).expect(403);
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ role: 'admin' }).expect(200);
    await t.http.get('/v1/api-keys').set(agent.auth).expect(401);
    const asAdmin = { Authorization: `Bearer ${(await login()).body.accessToken}` };
    await t.http.get('/v1/api-keys').set(asAdmin).expect(200);
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ role: 'agent' }).expect(200);
    await t.http.get('/v1/api-keys').set(asAdmin).expect(401);
    await t.http.get('/v1/api-keys').set({ Authorization: `Bearer ${(await login()).body.accessToken}` }).expect(403);
  });

  it('refuses the next request after a deactivation through the API; after reactivation a new login is needed', async () => {
    const agent = await addAgent(t, acme, 'agent');
    await t.http.get('/v1/settings').set(agent.auth).expect(200);
    await t.http.delete(`/v1/agents/${agent.agentId}`).set(acme.auth).expect(200);
    await t.http.get('/v1/settings').set(agent.auth).expect(401);
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ isActive: true }).expect(200);
    await t.http.get('/v1/settings').set(agent.auth).expect(401);
    const login = await t.http.post('/v1/auth/login').send({ email: agent.email, password: agent.password }).expect(200);
    await t.http.get('/v1/settings').set('Authorization', `Bearer ${login.body.accessToken}`).expect(200);
  });

  it('sees a write made through the model outside the API, as a script in this process would', async () => {
    const agent = await addAgent(t, acme, 'supervisor');
    await t.http.get('/v1/settings').set(agent.auth).expect(200);
    await t.model<Agent>(Agent.name).updateMany({ companyId: acme.companyId, _id: agent.agentId }, { $set: { isActive: false } });
    await t.http.get('/v1/settings').set(agent.auth).expect(401);
  });
});
