import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { AuditLogEntry } from '../../src/audit/audit-log.schema.js';
import { AuditTrail } from '../../src/audit/audit-trail.js';
import { CannedResponse } from '../../src/canned-responses/canned-response.schema.js';
import { Team } from '../../src/teams/team.schema.js';
import { Webhook } from '../../src/webhooks/webhook.schema.js';
import { addAgent, twoCompanies, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

interface Entry {
  id: string;
  action: string;
  actor: { type: string; id: string | null; name: string | null };
  target: { type: string; id: string };
  changes: Record<string, [unknown, unknown]> | null;
}

/** Contract section 23: teams, attribute definitions, company views and contact merges in the audit log. */
describe('audit log of teams, attributes, views and merges', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
  });
  afterAll(() => t.close());

  const entries = async (company: TestCompany, query = ''): Promise<Entry[]> =>
    (await t.http.get(`/v1/audit-log?limit=100${query}`).set(company.auth).expect(200)).body.data as Entry[];
  const stored = (company: TestCompany) => t.model<AuditLogEntry>(AuditLogEntry.name).find({ companyId: company.companyId }).lean();
  /** Waits for the entry of `action` about `targetId` (entries are chained a moment after the answer). */
  const entryOf = (action: string, targetId: string, company = acme) =>
    waitFor(async () => (await entries(company, `&action=${action}`)).find((entry) => entry.target.id === targetId), {
      message: `${action} ${targetId}`,
    });
  const byAdmin = () => ({ type: 'agent', id: acme.agentId, name: expect.any(String) });

  it('records a team created, changed and deleted', async () => {
    const created = await t.http
      .post('/v1/teams')
      .set(acme.auth)
      .send({ name: 'Billing', memberIds: [agent.agentId] })
      .expect(201);
    const id = created.body.id as string;
    expect(await entryOf('team.created', id)).toMatchObject({
      actor: byAdmin(),
      target: { type: 'team', id },
      changes: { name: [null, 'Billing'], memberIds: [null, [agent.agentId]], strategy: [null, 'round_robin'], isActive: [null, true] },
    });
    await t.http.patch(`/v1/teams/${id}`).set(acme.auth).send({ name: 'Billing EU', strategy: 'least_busy' }).expect(200);
    const updated = await entryOf('team.updated', id);
    expect(updated).toMatchObject({ actor: byAdmin(), target: { type: 'team', id } });
    expect(updated.changes).toEqual({ name: ['Billing', 'Billing EU'], strategy: ['round_robin', 'least_busy'] });
    await t.http.delete(`/v1/teams/${id}`).set(acme.auth).expect(200);
    expect(await entryOf('team.deleted', id)).toMatchObject({ actor: byAdmin(), target: { type: 'team', id }, changes: null });
  });

  it('records an attribute definition created, changed and deleted', async () => {
    const created = await t.http
      .post('/v1/attribute-definitions')
      .set(acme.auth)
      .send({ model: 'contact', key: 'plan', label: 'Plan', type: 'list', options: ['free', 'pro'] })
      .expect(201);
    const id = created.body.id as string;
    expect(await entryOf('attribute_definition.created', id)).toMatchObject({
      actor: byAdmin(),
      target: { type: 'attribute_definition', id },
      changes: { model: [null, 'contact'], key: [null, 'plan'], label: [null, 'Plan'], type: [null, 'list'], options: [null, ['free', 'pro']] },
    });
    await t.http
      .patch(`/v1/attribute-definitions/${id}`)
      .set(acme.auth)
      .send({ label: 'Plan name', options: ['free', 'pro', 'team'] })
      .expect(200);
    expect(await entryOf('attribute_definition.updated', id)).toMatchObject({
      actor: byAdmin(),
      target: { type: 'attribute_definition', id },
      changes: {
        label: ['Plan', 'Plan name'],
        options: [
          ['free', 'pro'],
          ['free', 'pro', 'team'],
        ],
      },
    });
    await t.http.delete(`/v1/attribute-definitions/${id}`).set(acme.auth).expect(200);
    expect(await entryOf('attribute_definition.deleted', id)).toMatchObject({ actor: byAdmin(), target: { type: 'attribute_definition', id } });
  });

  it("records the company's views, naming a filter without its values, and never a private view", async () => {
    const email = uniqueEmail('filtered');
    const filter = { field: 'email', op: 'eq', value: email };
    const privateView = await t.http
      .post('/v1/views')
      .set(agent.auth)
      .send({ name: 'Mine', model: 'contact', filter, visibility: 'private' })
      .expect(201);
    await t.http.patch(`/v1/views/${privateView.body.id}`).set(agent.auth).send({ name: 'Still mine' }).expect(200);
    await t.http.delete(`/v1/views/${privateView.body.id}`).set(agent.auth).expect(200);

    const created = await t.http
      .post('/v1/views')
      .set(acme.auth)
      .send({ name: 'Shared', model: 'contact', filter, visibility: 'company' })
      .expect(201);
    const id = created.body.id as string;
    const entry = await entryOf('view.created', id);
    expect(entry).toMatchObject({
      actor: byAdmin(),
      target: { type: 'view', id },
      changes: { name: [null, 'Shared'], model: [null, 'contact'], visibility: [null, 'company'], filter: [null, null], sort: [null, 'created'] },
    });
    await t.http
      .patch(`/v1/views/${id}`)
      .set(acme.auth)
      .send({ name: 'Shared 2', filter: { field: 'email', op: 'eq', value: uniqueEmail('other') } })
      .expect(200);
    expect((await entryOf('view.updated', id)).changes).toEqual({ name: ['Shared', 'Shared 2'], filter: [null, null] });
    await t.http.delete(`/v1/views/${id}`).set(acme.auth).expect(200);
    expect(await entryOf('view.deleted', id)).toMatchObject({ actor: byAdmin(), target: { type: 'view', id } });

    // The private view's changes came first; none was recorded, none is pending.
    await t.app.get(AuditTrail).sweep(new Date(Date.now() + 60_000));
    const all = await stored(acme);
    expect(all.filter((stored) => stored.target.id === privateView.body.id)).toEqual([]);
    expect(JSON.stringify(all)).not.toContain(email);
  });

  it('records a merge and its undo, naming contacts by id only', async () => {
    const person = { name: 'Ada Lovelace', email: uniqueEmail('ada'), phone: '+14155550177' };
    const target = await t.http.post('/v1/contacts').set(acme.auth).send({ name: person.name }).expect(201);
    const source = await t.http.post('/v1/contacts').set(acme.auth).send({ email: person.email, phone: person.phone }).expect(201);
    const merged = await t.http
      .post('/v1/contacts/merge')
      .set(acme.auth)
      .send({ targetId: target.body.id, sourceIds: [source.body.id] })
      .expect(200);
    const mergeId = merged.body.mergeId as string;
    expect(await entryOf('contact.merged', target.body.id)).toMatchObject({
      actor: byAdmin(),
      target: { type: 'contact', id: target.body.id },
      changes: { mergeId: [null, mergeId], sourceIds: [null, [source.body.id]] },
    });
    await t.http.post(`/v1/contacts/merges/${mergeId}/undo`).set(acme.auth).expect(200);
    expect(await entryOf('contact.merge_undone', target.body.id)).toMatchObject({
      actor: byAdmin(),
      target: { type: 'contact', id: target.body.id },
      changes: { mergeId: [mergeId, null] },
    });
    const raw = JSON.stringify((await stored(acme)).filter((entry) => entry.action.startsWith('contact.')));
    for (const value of [person.name, person.email, person.phone]) expect(raw).not.toContain(value);
  });

  it('removes by a mark carrying the entry: gone at once, its key free, deleted once the entry is chained', async () => {
    const cases = [
      { path: '/v1/teams', body: { name: 'Night shift' }, model: Team.name, action: 'team.deleted' },
      {
        path: '/v1/canned-responses',
        body: { shortCode: 'bye', title: 'Bye', content: 'Goodbye!' },
        model: CannedResponse.name,
        action: 'canned_response.deleted',
      },
      {
        path: '/v1/webhooks',
        body: { url: 'https://hooks.example.com/removed', events: ['CHAT_SENT'] },
        model: Webhook.name,
        action: 'webhook.deleted',
      },
    ];
    for (const { path, body, model, action } of cases) {
      const first = await t.http.post(path).set(acme.auth).send(body).expect(201);
      const id = first.body.id as string;
      await t.http.delete(`${path}/${id}`).set(acme.auth).expect(200);
      // Gone for the API as soon as the DELETE answered, and its unique key free for a record made right away.
      await t.http.get(`${path}/${id}`).set(acme.auth).expect(404);
      await t.http.delete(`${path}/${id}`).set(acme.auth).expect(404);
      expect((await t.http.get(path).set(acme.auth).expect(200)).body.data.map((row: { id: string }) => row.id)).not.toContain(id);
      const again = await t.http.post(path).set(acme.auth).send(body).expect(201);
      expect(again.body.id).not.toBe(id);
      expect(await entryOf(action, id)).toMatchObject({ actor: byAdmin(), changes: null });
      // The record itself is deleted once its entry is in the log.
      const rawId = new Types.ObjectId(model === Webhook.name ? id.replace(/^wh_/, '') : id);
      const documents = t.model(model).collection;
      await waitFor(async () => (await documents.countDocuments({ _id: rawId })) === 0, { message: `${model} ${id} deleted` });
    }
    expect((await t.http.get('/v1/audit-log/verify').set(acme.auth).expect(200)).body.ok).toBe(true);
  });

  it('finishes a removal left marked by a process that died, chaining its entry once', async () => {
    const teams = t.model<Team>(Team.name).collection;
    const companyId = new Types.ObjectId(acme.companyId);
    const longAgo = new Date(Date.now() - 60_000);
    const marked = new Types.ObjectId();
    const entry = {
      id: 'aud_markedbeforecrash0001',
      at: longAgo,
      actor: { type: 'agent', id: acme.agentId },
      action: 'team.deleted',
      target: { type: 'team', id: marked.toHexString() },
      changes: null,
      requestId: null,
      ip: null,
    };
    const team = {
      companyId,
      memberIds: [],
      strategy: 'round_robin',
      maxWaitSeconds: null,
      overflow: null,
      isActive: true,
      createdAt: longAgo,
      updatedAt: longAgo,
    };
    await teams.insertOne({ ...team, _id: marked, name: `removed:${marked.toHexString()}`, removedAt: longAgo, pendingAudit: [entry] });
    // Died after its entry was chained and pulled, before the delete.
    const chained = new Types.ObjectId();
    await teams.insertOne({ ...team, _id: chained, name: `removed:${chained.toHexString()}`, removedAt: longAgo, pendingAudit: [] });
    await t.http.get(`/v1/teams/${marked.toHexString()}`).set(acme.auth).expect(404);

    const trail = t.app.get(AuditTrail);
    expect(await trail.sweep(new Date())).toBeGreaterThanOrEqual(1);
    await trail.sweep(new Date());
    expect(await teams.countDocuments({ _id: { $in: [marked, chained] } })).toBe(0);
    const logged = await t.model<AuditLogEntry>(AuditLogEntry.name).find({ companyId: acme.companyId, _id: entry.id }).lean();
    expect(logged).toHaveLength(1);
    expect(await entryOf('team.deleted', marked.toHexString())).toMatchObject({ id: entry.id, actor: byAdmin() });
    expect((await t.http.get('/v1/audit-log/verify').set(acme.auth).expect(200)).body.ok).toBe(true);
  });

  it('records nothing for a refused change', async () => {
    const team = await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Kept' }).expect(201);
    await entryOf('team.created', team.body.id);
    const before = (await stored(acme)).length;
    await t.http
      .post('/v1/teams')
      .set(acme.auth)
      .send({ name: 'Ghosts', memberIds: ['000000000000000000000000'] })
      .expect(400);
    await t.http.patch(`/v1/teams/${team.body.id}`).set(agent.auth).send({ name: 'Taken over' }).expect(403);
    await t.http.post('/v1/attribute-definitions').set(acme.auth).send({ model: 'contact', key: 'Bad Key', label: 'x', type: 'text' }).expect(400);
    await t.http
      .post('/v1/attribute-definitions')
      .set(agent.auth)
      .send({ model: 'contact', key: 'seats', label: 'Seats', type: 'number' })
      .expect(403);
    await t.http
      .post('/v1/views')
      .set(agent.auth)
      .send({ name: 'Not mine to share', model: 'contact', filter: { field: 'name', op: 'eq', value: 'x' }, visibility: 'company' })
      .expect(403);
    await t.http
      .post('/v1/views')
      .set(acme.auth)
      .send({ name: 'Bad sort', model: 'contact', filter: { field: 'name', op: 'eq', value: 'x' }, sort: 'nope', visibility: 'company' })
      .expect(400);
    await t.app.get(AuditTrail).sweep(new Date(Date.now() + 60_000));
    expect((await stored(acme)).length).toBe(before);
    // Nothing of acme's reaches globex's log.
    expect((await entries(globex)).filter((entry) => entry.action !== 'auth.login')).toEqual([]);
  });
});
