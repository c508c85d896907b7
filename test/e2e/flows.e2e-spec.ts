import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Flow } from '../../src/flows/flow.schema.js';
import { addAgent, registerCompany, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectEventually } from '../support/wait-for.js';

interface Problem {
  field: string;
  message: string;
}

const STEPS = [
  { type: 'send_message', text: 'Our plans start at $10/month.' },
  { type: 'set_priority', priority: 'high' },
  { type: 'add_tags', tags: ['sales', 'pricing'] },
  { type: 'assign', strategy: 'least_busy' },
  { type: 'handoff' },
  { type: 'close', reason: 'Answered by the bot' },
];

describe('/v1/flows (management)', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let supervisor: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
    supervisor = await addAgent(t, acme, 'supervisor');
  });
  afterAll(() => t.close());

  const create = async (company: TestCompany, body: Record<string, unknown>) =>
    (await t.http.post('/v1/flows').set(company.auth).send(body).expect(201)).body;

  const problemsOf = async (body: object): Promise<Problem[]> => {
    const response = await t.http.post('/v1/flows').set(acme.auth).send(body).expect(400);
    expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
    return response.body.errors as Problem[];
  };

  it('creates a flow with every step type and defaults, stored as sent', async () => {
    const flow = await create(acme, { name: 'Pricing', steps: STEPS });
    expect(flow).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'Pricing',
      description: null,
      isActive: true,
      trigger: { type: 'manual', keywords: [] },
      steps: STEPS,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const stored = await t.model<Flow>(Flow.name).findOne({ _id: flow.id, companyId: acme.companyId }).lean();
    expect(stored?.steps).toEqual(STEPS);
    const read = await t.http.get(`/v1/flows/${flow.id}`).set(agent.auth).expect(200);
    expect(read.body).toEqual(flow);
  });

  it('stores inbound keywords normalised', async () => {
    const flow = await create(acme, {
      name: 'Keywords',
      description: 'Answers pricing questions',
      isActive: false,
      trigger: { type: 'inbound_message', keywords: [' Pricing ', 'pricing', 'Opening  Hours'] },
      steps: [{ type: 'send_message', text: 'hi' }],
    });
    expect(flow).toMatchObject({
      description: 'Answers pricing questions',
      isActive: false,
      trigger: { type: 'inbound_message', keywords: ['pricing', 'opening hours'] },
    });
  });

  it('refuses an unknown step type, naming it', async () => {
    const problems = await problemsOf({ name: 'x', steps: [{ type: 'send_message', text: 'ok' }, { type: 'teleport' }] });
    expect(problems).toContainEqual({ field: 'steps.1.type', message: expect.stringContaining('"teleport"') });
    const missing = await problemsOf({ name: 'x', steps: [{ text: 'no type' }] });
    expect(missing.map((problem) => problem.field)).toContain('steps.0.type');
  });

  it('validates each step by its type', async () => {
    const cases: [unknown, string][] = [
      [{ type: 'set_priority', priority: 'urgent' }, 'steps.0.priority'],
      [{ type: 'set_priority' }, 'steps.0.priority'],
      [{ type: 'send_message' }, 'steps.0.text'],
      [{ type: 'send_message', text: '' }, 'steps.0.text'],
      [{ type: 'send_message', text: 42 }, 'steps.0.text'],
      [{ type: 'send_message', text: 'x'.repeat(4097) }, 'steps.0.text'],
      [{ type: 'add_tags' }, 'steps.0.tags'],
      [{ type: 'add_tags', tags: 'vip' }, 'steps.0.tags'],
      [{ type: 'add_tags', tags: ['t'.repeat(51)] }, 'steps.0.tags'],
      [{ type: 'add_tags', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'steps.0.tags'],
      [{ type: 'assign', agentId: 'nope' }, 'steps.0.agentId'],
      [{ type: 'assign', strategy: 'random' }, 'steps.0.strategy'],
      [{ type: 'assign', agentId: acme.agentId, strategy: 'round_robin' }, 'steps.0.strategy'],
      [{ type: 'close', reason: '' }, 'steps.0.reason'],
      [{ type: 'handoff', text: 'extra' }, 'steps.0.text'],
      [{ type: 'send_message', text: 'hi', priority: 'high' }, 'steps.0.priority'],
    ];
    for (const [step, field] of cases) {
      const problems = await problemsOf({ name: 'x', steps: [step] });
      expect({ step, fields: problems.map((problem) => problem.field) }).toEqual({ step, fields: expect.arrayContaining([field]) });
    }
  });

  it('validates the flow itself', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ steps: [{ type: 'handoff' }] }, 'name'],
      [{ name: '', steps: [{ type: 'handoff' }] }, 'name'],
      [{ name: 'x' }, 'steps'],
      [{ name: 'x', steps: [] }, 'steps'],
      [{ name: 'x', steps: Array.from({ length: 51 }, () => ({ type: 'handoff' })) }, 'steps'],
      [{ name: 'x', steps: [null] }, 'steps.0'],
      [{ name: 'x', steps: ['handoff'] }, 'steps.0'],
      [{ name: 'x', steps: { type: 'handoff' } }, 'steps'],
      [{ name: 'x', steps: [{ type: 'handoff' }], isActive: 'yes' }, 'isActive'],
      [{ name: 'x', steps: [{ type: 'handoff' }], trigger: { type: 'cron' } }, 'trigger.type'],
      [{ name: 'x', steps: [{ type: 'handoff' }], trigger: { type: 'manual', keywords: ['x'] } }, 'trigger.keywords'],
      [{ name: 'x', steps: [{ type: 'handoff' }], trigger: { type: 'inbound_message', keywords: [''] } }, 'trigger.keywords'],
      [{ name: 'x', steps: [{ type: 'handoff' }], trigger: 'manual' }, 'trigger'],
      [{ name: 'x', steps: [{ type: 'handoff' }], owner: 'me' }, 'owner'],
    ];
    for (const [body, field] of cases) {
      const problems = await problemsOf(body);
      expect({ body, fields: problems.map((problem) => problem.field) }).toEqual({ body, fields: expect.arrayContaining([field]) });
    }
    const operator = await t.http
      .post('/v1/flows')
      .set(acme.auth)
      .send({ name: 'x', steps: [{ type: 'send_message', text: { $gt: '' } }] })
      .expect(400);
    expect(operator.body.message).toMatch(/\$gt/);
    await t.http.post('/v1/flows').set(acme.auth).set('content-type', 'application/json').send('{"name":').expect(400);
    expect(await t.model<Flow>(Flow.name).countDocuments({ companyId: acme.companyId, name: 'x' })).toBe(0);
  });

  it('refuses an assign step naming an agent of another company', async () => {
    const problems = await problemsOf({ name: 'x', steps: [{ type: 'assign', agentId: globex.agentId }] });
    expect(problems).toEqual([{ field: 'steps.0.agentId', message: `agent ${globex.agentId} not found` }]);
    await create(acme, { name: 'own agent', steps: [{ type: 'assign', agentId: agent.agentId }] });
  });

  it('replaces a whole flow with PUT: what is left out takes its default', async () => {
    const flow = await create(acme, {
      name: 'Before',
      description: 'old',
      isActive: false,
      trigger: { type: 'inbound_message', keywords: ['hello'] },
      steps: STEPS,
    });
    const replaced = await t.http
      .put(`/v1/flows/${flow.id}`)
      .set(supervisor.auth)
      .send({ name: 'After', steps: [{ type: 'handoff' }] })
      .expect(200);
    expect(replaced.body).toMatchObject({
      id: flow.id,
      name: 'After',
      description: null,
      isActive: true,
      trigger: { type: 'manual', keywords: [] },
      steps: [{ type: 'handoff' }],
      createdAt: flow.createdAt,
    });
    expect(await t.model<Flow>(Flow.name).findOne({ _id: flow.id, companyId: acme.companyId }).lean()).toMatchObject({
      name: 'After',
      steps: [{ type: 'handoff' }],
    });
    await t.http.put(`/v1/flows/${flow.id}`).set(acme.auth).send({ steps: [{ type: 'handoff' }] }).expect(400);
    await t.http.put(`/v1/flows/${flow.id}`).set(acme.auth).send({ name: 'x', steps: [{ type: 'nope' }] }).expect(400);
    expect((await t.http.get(`/v1/flows/${flow.id}`).set(acme.auth).expect(200)).body.name).toBe('After');
  });

  it('deletes a flow and answers { id, deleted: true }', async () => {
    const flow = await create(acme, { name: 'Doomed', steps: [{ type: 'handoff' }] });
    const response = await t.http.delete(`/v1/flows/${flow.id}`).set(supervisor.auth).expect(200);
    expect(response.body).toEqual({ id: flow.id, deleted: true });
    await t.http.get(`/v1/flows/${flow.id}`).set(acme.auth).expect(404);
    await t.http.delete(`/v1/flows/${flow.id}`).set(acme.auth).expect(404);
    // Stored until its audit entry is chained, a moment after the answer (removablePlugin).
    await expectEventually(() => t.model<Flow>(Flow.name).countDocuments({ _id: flow.id, companyId: acme.companyId }), 0);
  });

  it('lists newest first, filtered by isActive, with a cursor', async () => {
    const company = await registerCompany(t.http, 'Lister');
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) {
      ids.unshift((await create(company, { name: `f${index}`, isActive: index % 2 === 0, steps: [{ type: 'handoff' }] })).id);
    }
    const all = await t.http.get('/v1/flows').set(company.auth).expect(200);
    expect(all.body.data.map((flow: { id: string }) => flow.id)).toEqual(ids);
    expect(all.body.nextCursor).toBeNull();
    const active = await t.http.get('/v1/flows').query({ isActive: 'true' }).set(company.auth).expect(200);
    expect(active.body.data.map((flow: { name: string }) => flow.name)).toEqual(['f4', 'f2', 'f0']);
    const inactive = await t.http.get('/v1/flows').query({ isActive: 'false' }).set(company.auth).expect(200);
    expect(inactive.body.data.map((flow: { name: string }) => flow.name)).toEqual(['f3', 'f1']);

    const first = await t.http.get('/v1/flows').query({ limit: 2 }).set(company.auth).expect(200);
    const second = await t.http.get('/v1/flows').query({ limit: 2, cursor: first.body.nextCursor }).set(company.auth).expect(200);
    const third = await t.http.get('/v1/flows').query({ limit: 2, cursor: second.body.nextCursor }).set(company.auth).expect(200);
    expect(third.body.nextCursor).toBeNull();
    expect([...first.body.data, ...second.body.data, ...third.body.data].map((flow: { id: string }) => flow.id)).toEqual(ids);

    for (const query of [{ isActive: 'maybe' }, { limit: 0 }, { limit: 101 }, { limit: 'x' }, { cursor: '!!' }]) {
      await t.http.get('/v1/flows').query(query).set(company.auth).expect(400);
    }
    await t.http.get('/v1/flows?isActive[$ne]=true').set(company.auth).expect(400);
  });

  it('lets agents read but not manage flows (403)', async () => {
    const flow = await create(acme, { name: 'Guarded', steps: [{ type: 'handoff' }] });
    await t.http.get('/v1/flows').set(agent.auth).expect(200);
    await t.http.post('/v1/flows').set(agent.auth).send({ name: 'mine', steps: [{ type: 'handoff' }] }).expect(403);
    await t.http.put(`/v1/flows/${flow.id}`).set(agent.auth).send({ name: 'mine', steps: [{ type: 'handoff' }] }).expect(403);
    await t.http.delete(`/v1/flows/${flow.id}`).set(agent.auth).expect(403);
    expect((await t.http.get(`/v1/flows/${flow.id}`).set(agent.auth).expect(200)).body.name).toBe('Guarded');
    await create(acme, { name: 'by supervisor', steps: [{ type: 'handoff' }] });
    await t.http.get('/v1/flows').expect(401);
  });

  it('keeps companies apart: another company’s flow is a 404 everywhere', async () => {
    const flow = await create(acme, { name: 'Acme secret', steps: [{ type: 'handoff' }] });
    await t.http.get(`/v1/flows/${flow.id}`).set(globex.auth).expect(404);
    await t.http.put(`/v1/flows/${flow.id}`).set(globex.auth).send({ name: 'stolen', steps: [{ type: 'handoff' }] }).expect(404);
    await t.http.delete(`/v1/flows/${flow.id}`).set(globex.auth).expect(404);
    await t.http.post(`/v1/flows/${flow.id}/execute`).set(globex.auth).send({ conversationId: flow.id }).expect(404);
    await t.http.get('/v1/flows/not-an-id').set(acme.auth).expect(404);
    await t.http.delete('/v1/flows/not-an-id').set(acme.auth).expect(404);
    const list = await t.http.get('/v1/flows').set(globex.auth).expect(200);
    expect(list.body.data.map((item: { id: string }) => item.id)).not.toContain(flow.id);
    expect((await t.http.get(`/v1/flows/${flow.id}`).set(acme.auth).expect(200)).body.name).toBe('Acme secret');
  });
});
