import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent } from '../../src/agents/agent.schema.js';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Team } from '../../src/teams/team.schema.js';
import { addAgent, registerCompany, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('teams (/v1/teams)', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
  });
  afterAll(async () => {
    await t.close();
  });

  const teamsOf = (company: TestCompany) => t.model<Team>(Team.name).countDocuments({ companyId: company.companyId });

  it('creates, lists, gets, changes and deletes a team; agents show their teamIds', async () => {
    const member = await addAgent(t, acme, 'agent');
    const created = await t.http
      .post('/v1/teams')
      .set(acme.auth)
      .send({
        name: 'Billing',
        memberIds: [member.agentId, acme.agentId],
        strategy: 'least_busy',
        maxWaitSeconds: 120,
        overflow: { action: 'close' },
      })
      .expect(201);
    expect(created.body).toMatchObject({
      name: 'Billing',
      memberIds: [member.agentId, acme.agentId],
      strategy: 'least_busy',
      maxWaitSeconds: 120,
      overflow: { action: 'close', teamId: null, text: null },
      isActive: true,
    });
    const id = created.body.id as string;
    expect((await t.http.get(`/v1/teams/${id}`).set(member.auth).expect(200)).body.name).toBe('Billing');
    expect((await t.http.get('/v1/teams').set(member.auth).expect(200)).body.data.map((team: { id: string }) => team.id)).toContain(id);
    expect((await t.http.get(`/v1/agents/${member.agentId}`).set(acme.auth).expect(200)).body).toMatchObject({
      teamIds: [id],
      capacity: null,
      capacityByChannel: {},
      skills: [],
      load: { total: 0, byChannel: {} },
    });

    const other = await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Sales' }).expect(201);
    const changed = await t.http
      .patch(`/v1/teams/${id}`)
      .set(acme.auth)
      .send({ memberIds: [member.agentId], overflow: { action: 'team', teamId: other.body.id }, strategy: 'manual' })
      .expect(200);
    expect(changed.body).toMatchObject({ memberIds: [member.agentId], strategy: 'manual', overflow: { action: 'team', teamId: other.body.id } });
    await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Sales' }).expect(409);

    // Deleting the overflow's target clears the overflow.
    await t.http.delete(`/v1/teams/${other.body.id}`).set(acme.auth).expect(200, { id: other.body.id, deleted: true });
    expect((await t.http.get(`/v1/teams/${id}`).set(acme.auth).expect(200)).body.overflow).toBeNull();
    await t.http.delete(`/v1/teams/${id}`).set(acme.auth).expect(200);
    await t.http.get(`/v1/teams/${id}`).set(acme.auth).expect(404);
    expect((await t.http.get(`/v1/agents/${member.agentId}`).set(acme.auth).expect(200)).body.teamIds).toEqual([]);
  });

  it('lets plain agents read teams but not manage them (403); supervisors may', async () => {
    const agent = await addAgent(t, acme, 'agent');
    const supervisor = await addAgent(t, acme, 'supervisor');
    const before = await teamsOf(acme);
    await t.http.post('/v1/teams').set(agent.auth).send({ name: 'Nope' }).expect(403);
    expect(await teamsOf(acme)).toBe(before);
    const team = await t.http.post('/v1/teams').set(supervisor.auth).send({ name: 'Supervised' }).expect(201);
    await t.http.patch(`/v1/teams/${team.body.id}`).set(agent.auth).send({ name: 'Renamed' }).expect(403);
    await t.http.delete(`/v1/teams/${team.body.id}`).set(agent.auth).expect(403);
    expect((await t.http.get(`/v1/teams/${team.body.id}`).set(agent.auth).expect(200)).body.name).toBe('Supervised');
  });

  it("answers 404 for another company's team, and never lists it", async () => {
    const theirs = await t.http.post('/v1/teams').set(globex.auth).send({ name: 'Globex only' }).expect(201);
    await t.http.get(`/v1/teams/${theirs.body.id}`).set(acme.auth).expect(404);
    await t.http.patch(`/v1/teams/${theirs.body.id}`).set(acme.auth).send({ name: 'Mine' }).expect(404);
    await t.http.delete(`/v1/teams/${theirs.body.id}`).set(acme.auth).expect(404);
    await t.http.get('/v1/teams/not-an-id').set(acme.auth).expect(404);
    const listed = (await t.http.get('/v1/teams?limit=100').set(acme.auth).expect(200)).body.data.map((team: { id: string }) => team.id);
    expect(listed).not.toContain(theirs.body.id);
    expect((await t.http.get(`/v1/teams/${theirs.body.id}`).set(globex.auth).expect(200)).body.name).toBe('Globex only');
  });

  it('refuses bad bodies with a 400 naming the field, storing nothing', async () => {
    const company = await registerCompany(t.http, 'Strict');
    const foreign = await addAgent(t, globex, 'agent');
    const leaving = await addAgent(t, company, 'agent');
    await t.http.delete(`/v1/agents/${leaving.agentId}`).set(company.auth).expect(200);
    const existing = await t.http.post('/v1/teams').set(company.auth).send({ name: 'Existing' }).expect(201);
    const refusals: [Record<string, unknown>, string][] = [
      [{ name: 'A', memberIds: [foreign.agentId] }, 'memberIds'],
      [{ name: 'A', memberIds: [leaving.agentId] }, 'memberIds'],
      [{ name: 'A', memberIds: ['nope'] }, 'memberIds'],
      [{ name: 'A', overflow: { action: 'team' } }, 'overflow.teamId'],
      [{ name: 'A', overflow: { action: 'team', teamId: existing.body.id.replace(/^./, 'f') } }, 'overflow.teamId'],
      [{ name: 'A', overflow: { action: 'message' } }, 'overflow.text'],
      [{ name: 'A', overflow: { action: 'explode' } }, 'overflow.action'],
      [{ name: 'A', maxWaitSeconds: 59 }, 'maxWaitSeconds'],
      [{ name: 'A', maxWaitSeconds: 604_801 }, 'maxWaitSeconds'],
      [{ name: 'A', strategy: 'random' }, 'strategy'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
    ];
    for (const [body, field] of refusals) {
      const response = await t.http.post('/v1/teams').set(company.auth).send(body).expect(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    // A team overflowing into itself.
    const self = await t.http
      .patch(`/v1/teams/${existing.body.id}`)
      .set(company.auth)
      .send({ overflow: { action: 'team', teamId: existing.body.id } })
      .expect(400);
    expect(JSON.stringify(self.body)).toContain('overflow.teamId');
    expect(await teamsOf(company)).toBe(1);
    expect((await t.http.get(`/v1/teams/${existing.body.id}`).set(company.auth).expect(200)).body.overflow).toBeNull();
  });

  it('reports per team: queued, waits, assigned, closed (GET /v1/analytics/teams)', async () => {
    const company = await registerCompany(t.http, 'Reported');
    const worker = await addAgent(t, company, 'agent');
    const team = (await t.http.post('/v1/teams').set(company.auth).send({ name: 'Desk', strategy: 'manual' }).expect(201)).body;
    const quiet = (await t.http.post('/v1/teams').set(company.auth).send({ name: 'Quiet' }).expect(201)).body;
    const ids: string[] = [];
    for (let n = 0; n < 2; n += 1) {
      const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact'), name: 'Lin' });
      const { body } = await t.http.post('/v1/conversations').set(company.auth).send({ contactId: contact._id.toHexString() }).expect(201);
      await t.http.patch(`/v1/conversations/${body.id}`).set(company.auth).send({ teamId: team.id, status: 'queued' }).expect(200);
      ids.push(body.id);
    }
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await t.http.post(`/v1/conversations/${ids[0]}/transfer`).set(company.auth).send({ agentId: worker.agentId }).expect(200);
    await t.http.post(`/v1/conversations/${ids[0]}/close`).set(company.auth).send({}).expect(200);
    const today = new Date().toISOString().slice(0, 10);
    const report = await t.http.get(`/v1/analytics/teams?startDate=${today}&endDate=${today}`).set(worker.auth).expect(200);
    const desk = report.body.data.find((row: { teamId: string }) => row.teamId === team.id);
    expect(desk).toMatchObject({ name: 'Desk', queued: 2, assigned: 1, closed: 1, queueTimeouts: 0, slaBreaches: 0 });
    expect(desk.avgWaitSeconds).toBeGreaterThanOrEqual(1);
    expect(desk.maxWaitSeconds).toBe(desk.avgWaitSeconds);
    expect(report.body.data.find((row: { teamId: string }) => row.teamId === quiet.id)).toMatchObject({
      queued: 0,
      assigned: 0,
      avgWaitSeconds: null,
    });
    const other = (await t.http.get(`/v1/analytics/teams?startDate=${today}&endDate=${today}`).set(globex.auth).expect(200)).body.data;
    expect(other.map((row: { teamId: string }) => row.teamId)).not.toContain(team.id);
    const bad = await t.http.get(`/v1/analytics/teams?startDate=${today}&endDate=yesterday`).set(worker.auth).expect(400);
    expect(JSON.stringify(bad.body)).toContain('endDate');
  });

  it('lets admins set capacity, capacityByChannel and skills, refusing bad ones and other roles', async () => {
    const agent = await addAgent(t, acme, 'agent');
    const updated = await t.http
      .patch(`/v1/agents/${agent.agentId}`)
      .set(acme.auth)
      .send({ capacity: 3, capacityByChannel: { whatsapp: 1, 'web.chat': 2 }, skills: ['french', 'billing-2'] })
      .expect(200);
    expect(updated.body).toMatchObject({ capacity: 3, capacityByChannel: { whatsapp: 1, 'web.chat': 2 }, skills: ['french', 'billing-2'] });
    const refusals: [Record<string, unknown>, string][] = [
      [{ capacity: 101 }, 'capacity'],
      [{ capacity: -1 }, 'capacity'],
      [{ capacity: 1.5 }, 'capacity'],
      [{ capacityByChannel: { whatsapp: 101 } }, 'capacityByChannel'],
      [{ capacityByChannel: { 'Upper Case': 1 } }, 'capacityByChannel'],
      [{ skills: ['French'] }, 'skills'],
      [{ skills: Array.from({ length: 21 }, (_, n) => `s${n}`) }, 'skills'],
      [{ skills: 'french' }, 'skills'],
    ];
    for (const [body, field] of refusals) {
      const response = await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send(body).expect(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    await t.http
      .patch(`/v1/agents/${agent.agentId}`)
      .set(agent.auth)
      .send({ skills: ['vip'] })
      .expect(403);
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ capacity: null }).expect(200);
    const stored = await t.model<Agent>(Agent.name).findOne({ _id: agent.agentId, companyId: acme.companyId }).lean();
    expect(stored).toMatchObject({ capacity: null, capacityByChannel: { whatsapp: 1, 'web.chat': 2 }, skills: ['french', 'billing-2'] });
    await t.http
      .get(`/v1/agents/${foreignId(agent.agentId)}`)
      .set(acme.auth)
      .expect(404);
  });
});

/** An id no record has. */
function foreignId(id: string): string {
  return `${id.slice(0, -6)}ffffff`;
}
