import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SlaPolicy } from '../../src/sla-policies/sla-policy.schema.js';
import { addAgent, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Problem {
  field: string;
  message: string;
}

/** /v1/sla-policies (contract section 16): the resource itself; what it does to conversations is in sla-clocks. */
describe('/v1/sla-policies', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let supervisor: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
    supervisor = await addAgent(t, acme, 'supervisor');
  });
  afterAll(() => t.close());

  const fieldsOf = (body: { errors?: Problem[] }) => (body.errors ?? []).map((problem) => problem.field).sort();
  const stored = (company: TestCompany) => t.model<SlaPolicy>(SlaPolicy.name).countDocuments({ companyId: company.companyId });

  it('a supervisor creates one; every agent reads it; defaults filled in, channels lower-cased', async () => {
    const created = await t.http
      .post('/v1/sla-policies')
      .set(supervisor.auth)
      .send({ name: 'VIP', conditions: { priorities: ['high', 'high'], channels: ['WhatsApp'] }, firstResponseSeconds: 900, warnBeforeSeconds: 300 })
      .expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'VIP',
      isActive: true,
      conditions: { priorities: ['high'], channels: ['whatsapp'] },
      firstResponseSeconds: 900,
      nextResponseSeconds: null,
      resolutionSeconds: null,
      businessHoursOnly: false,
      warnBeforeSeconds: 300,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await t.http.get(`/v1/sla-policies/${created.body.id}`).set(agent.auth).expect(200)).body).toEqual(created.body);
    const listed = await t.http.get('/v1/sla-policies').set(agent.auth).expect(200);
    expect(listed.body).toEqual({ data: [created.body], nextCursor: null });
  });

  it('agents may not write; admins may', async () => {
    const before = await stored(acme);
    await t.http.post('/v1/sla-policies').set(agent.auth).send({ name: 'No', resolutionSeconds: 60 }).expect(403);
    const made = await t.http.post('/v1/sla-policies').set(acme.auth).send({ name: 'Admin made', resolutionSeconds: 86400 }).expect(201);
    const storedMade = () => t.model<SlaPolicy>(SlaPolicy.name).findOne({ _id: made.body.id, companyId: acme.companyId }).lean();
    const madeBefore = await storedMade();
    expect(madeBefore?.name).toBe('Admin made');
    await t.http.patch(`/v1/sla-policies/${made.body.id}`).set(agent.auth).send({ name: 'Renamed' }).expect(403);
    await t.http.delete(`/v1/sla-policies/${made.body.id}`).set(agent.auth).expect(403);
    expect(await stored(acme)).toBe(before + 1);
    expect(await storedMade()).toEqual(madeBefore);
    await t.http.get('/v1/sla-policies').expect(401);
  });

  it('refuses bad input with 400 naming the field, storing nothing', async () => {
    const before = await stored(acme);
    const cases: [Record<string, unknown>, string[]][] = [
      [{ name: 'No target' }, ['firstResponseSeconds', 'nextResponseSeconds', 'resolutionSeconds']],
      [{ name: 'Null targets', firstResponseSeconds: null, resolutionSeconds: null }, ['firstResponseSeconds', 'nextResponseSeconds', 'resolutionSeconds']],
      [{ name: 'Late warning', firstResponseSeconds: 600, resolutionSeconds: 60, warnBeforeSeconds: 60 }, ['warnBeforeSeconds']],
      [{ name: 'Zero', firstResponseSeconds: 0 }, ['firstResponseSeconds']],
      [{ name: 'Fraction', nextResponseSeconds: 1.5 }, ['nextResponseSeconds']],
      [{ name: 'Too long', resolutionSeconds: 366 * 86_400 + 1 }, ['resolutionSeconds']],
      [{ name: 'Bad priority', conditions: { priorities: ['urgent'] }, resolutionSeconds: 60 }, ['conditions.priorities']],
      [{ name: 'Bad channel', conditions: { channels: ['what app'] }, resolutionSeconds: 60 }, ['conditions.channels']],
      [{ name: '', resolutionSeconds: 60 }, ['name']],
      [{ resolutionSeconds: 60 }, ['name']],
      [{ name: 'Extra', resolutionSeconds: 60, escalateTo: 'boss' }, ['escalateTo']],
      [{ name: 'Flag', resolutionSeconds: 60, businessHoursOnly: 'yes' }, ['businessHoursOnly']],
    ];
    for (const [body, fields] of cases) {
      const response = await t.http.post('/v1/sla-policies').set(acme.auth).send(body).expect(400);
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(fieldsOf(response.body)).toEqual(expect.arrayContaining(fields));
    }
    const [noTarget] = (await t.http.post('/v1/sla-policies').set(acme.auth).send({ name: 'x' }).expect(400)).body.errors;
    expect(noTarget.message).toMatch(/at least one target/);
    expect(await stored(acme)).toBe(before);
  });

  it('PATCH merges, checks the result as a whole, and null clears a target', async () => {
    const policy = (await t.http.post('/v1/sla-policies').set(acme.auth).send({ name: 'Two targets', firstResponseSeconds: 600, resolutionSeconds: 7200 }).expect(201)).body;
    const patched = await t.http
      .patch(`/v1/sla-policies/${policy.id}`)
      .set(supervisor.auth)
      .send({ firstResponseSeconds: null, conditions: { channels: ['sms'] }, businessHoursOnly: true, isActive: false })
      .expect(200);
    expect(patched.body).toMatchObject({
      firstResponseSeconds: null,
      resolutionSeconds: 7200,
      conditions: { priorities: [], channels: ['sms'] },
      businessHoursOnly: true,
      isActive: false,
    });
    const refused = await t.http.patch(`/v1/sla-policies/${policy.id}`).set(acme.auth).send({ resolutionSeconds: null }).expect(400);
    expect(fieldsOf(refused.body)).toEqual(['firstResponseSeconds', 'nextResponseSeconds', 'resolutionSeconds']);
    const warn = await t.http.patch(`/v1/sla-policies/${policy.id}`).set(acme.auth).send({ warnBeforeSeconds: 7200 }).expect(400);
    expect(fieldsOf(warn.body)).toEqual(['warnBeforeSeconds']);
    expect((await t.http.get(`/v1/sla-policies/${policy.id}`).set(acme.auth).expect(200)).body).toEqual(patched.body);
    expect((await t.http.patch(`/v1/sla-policies/${policy.id}`).set(acme.auth).send({}).expect(200)).body).toEqual(patched.body);
  });

  it('lists newest first in pages, filters on isActive', async () => {
    const company = (await twoCompanies(t.http)).acme;
    const ids: string[] = [];
    for (const [index, isActive] of [true, false, true].entries()) {
      ids.push((await t.http.post('/v1/sla-policies').set(company.auth).send({ name: `P${index}`, isActive, resolutionSeconds: 60 }).expect(201)).body.id);
    }
    const first = await t.http.get('/v1/sla-policies?limit=2').set(company.auth).expect(200);
    expect(first.body.data.map((policy: { id: string }) => policy.id)).toEqual([ids[2], ids[1]]);
    const second = await t.http.get(`/v1/sla-policies?limit=2&cursor=${first.body.nextCursor}`).set(company.auth).expect(200);
    expect(second.body).toEqual({ data: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
    const active = await t.http.get('/v1/sla-policies?isActive=false').set(company.auth).expect(200);
    expect(active.body.data.map((policy: { id: string }) => policy.id)).toEqual([ids[1]]);
    await t.http.get('/v1/sla-policies?limit=0').set(company.auth).expect(400);
  });

  it("another company's policy answers 404 everywhere, and is left as it was", async () => {
    const theirs = (await t.http.post('/v1/sla-policies').set(globex.auth).send({ name: 'Globex', resolutionSeconds: 600 }).expect(201)).body;
    await t.http.get(`/v1/sla-policies/${theirs.id}`).set(acme.auth).expect(404);
    await t.http.patch(`/v1/sla-policies/${theirs.id}`).set(acme.auth).send({ name: 'Mine' }).expect(404);
    await t.http.delete(`/v1/sla-policies/${theirs.id}`).set(acme.auth).expect(404);
    await t.http.get('/v1/sla-policies/not-an-id').set(acme.auth).expect(404);
    const listed = await t.http.get('/v1/sla-policies').set(acme.auth).expect(200);
    expect(listed.body.data.map((policy: { id: string }) => policy.id)).not.toContain(theirs.id);
    expect((await t.http.get(`/v1/sla-policies/${theirs.id}`).set(globex.auth).expect(200)).body.name).toBe('Globex');
  });

  it('DELETE removes it', async () => {
    const policy = (await t.http.post('/v1/sla-policies').set(acme.auth).send({ name: 'Short-lived', resolutionSeconds: 60 }).expect(201)).body;
    expect((await t.http.delete(`/v1/sla-policies/${policy.id}`).set(supervisor.auth).expect(200)).body).toEqual({ id: policy.id, deleted: true });
    await t.http.get(`/v1/sla-policies/${policy.id}`).set(acme.auth).expect(404);
    await t.http.delete(`/v1/sla-policies/${policy.id}`).set(acme.auth).expect(404);
  });
});
