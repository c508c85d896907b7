import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { MAX_COMPANY_VIEWS, MAX_PRIVATE_VIEWS_PER_AGENT, SavedView } from '../../src/views/saved-view.schema.js';
import { addAgent, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('/v1/views', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let other: TestAgentLogin;
  let contactId: string;

  const QUEUED = { field: 'status', op: 'eq', value: 'queued' };
  const create = (auth: { Authorization: string }, body: Record<string, unknown>) => t.http.post('/v1/views').set(auth).send(body);
  const stored = () => t.model<SavedView>(SavedView.name).collection.find({}).toArray();

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    [agent, other] = [await addAgent(t, acme, 'agent'), await addAgent(t, acme, 'supervisor')];
    await t.http
      .post('/v1/attribute-definitions')
      .set(acme.auth)
      .send({ model: 'conversation', key: 'vip', label: 'VIP', type: 'boolean' })
      .expect(201);
    const contact = await t.http
      .post('/v1/contacts')
      .set(acme.auth)
      .send({ name: 'Ada', tags: ['vip'] })
      .expect(201);
    contactId = contact.body.id;
    for (const channel of ['api', 'web', 'sms']) {
      const conversation = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId, channel }).expect(201);
      await t.http
        .patch(`/v1/conversations/${conversation.body.id}`)
        .set(acme.auth)
        .send({ attributes: { vip: channel !== 'sms' }, ...(channel === 'api' ? {} : { status: 'queued' }) })
        .expect(200);
    }
  });
  beforeEach(async () => {
    await t.model(SavedView.name).collection.deleteMany({});
  });
  afterAll(() => t.close());

  it('lets any agent keep private views that only it sees, and run them', async () => {
    const created = await create(agent.auth, {
      name: 'VIP queue',
      model: 'conversation',
      filter: { and: [QUEUED, { field: 'attributes.vip', op: 'eq', value: true }] },
      sort: 'lastActivity',
      visibility: 'private',
    }).expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'VIP queue',
      model: 'conversation',
      filter: { and: [QUEUED, { field: 'attributes.vip', op: 'eq', value: true }] },
      sort: 'lastActivity',
      visibility: 'private',
      ownerId: agent.agentId,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const path = `/v1/views/${created.body.id}`;
    expect((await t.http.get('/v1/views').set(agent.auth).expect(200)).body).toEqual({ data: [created.body] });
    expect((await t.http.get('/v1/views').set(other.auth).expect(200)).body).toEqual({ data: [] });
    await t.http.get(path).set(other.auth).expect(404);
    await t.http.patch(path).set(acme.auth).send({ name: 'Mine now' }).expect(404);
    await t.http.delete(path).set(other.auth).expect(404);
    await t.http.get(path).set(globex.auth).expect(404);

    const results = await t.http.get(`${path}/results`).set(agent.auth).expect(200);
    expect(results.body.data.map((c: { channel: string; attributes: unknown }) => [c.channel, c.attributes])).toEqual([['web', { vip: true }]]);
    expect(results.body.nextCursor).toBeNull();
    // Read from memory now: still another agent's private view (404), and nothing for another company.
    await t.http.get(`${path}/results`).set(other.auth).expect(404);
    await t.http.get(`${path}/results`).set(globex.auth).expect(404);
    const searched = await t.http
      .post('/v1/conversations/search')
      .set(agent.auth)
      .send({ filter: created.body.filter, sort: 'lastActivity' })
      .expect(200);
    expect(results.body).toEqual(searched.body);

    const renamed = await t.http.patch(path).set(agent.auth).send({ name: 'Queued', filter: QUEUED }).expect(200);
    expect(renamed.body).toMatchObject({ name: 'Queued', filter: QUEUED, sort: 'lastActivity' });
    expect((await t.http.get(`${path}/results?limit=1`).set(agent.auth).expect(200)).body).toMatchObject({
      data: [expect.any(Object)],
      nextCursor: expect.any(String),
    });
    expect((await t.http.delete(path).set(agent.auth).expect(200)).body).toEqual({ id: created.body.id, deleted: true });
    await t.http.get(`${path}/results`).set(agent.auth).expect(404);
    expect(await stored()).toEqual([]);
  });

  it('lets admins alone create, change and delete company views, which every agent sees (403 writes nothing)', async () => {
    await create(agent.auth, { name: 'Queue', model: 'conversation', filter: QUEUED, visibility: 'company' }).expect(403);
    await create(other.auth, { name: 'Queue', model: 'conversation', filter: QUEUED, visibility: 'company' }).expect(403);
    expect(await stored()).toEqual([]);
    const created = await create(acme.auth, { name: 'Queue', model: 'conversation', filter: QUEUED, visibility: 'company' }).expect(201);
    expect((await t.http.get('/v1/views').set(agent.auth).expect(200)).body.data).toEqual([created.body]);
    await t.http.patch(`/v1/views/${created.body.id}`).set(agent.auth).send({ name: 'Mine' }).expect(403);
    await t.http.delete(`/v1/views/${created.body.id}`).set(other.auth).expect(403);
    expect(await stored()).toEqual([expect.objectContaining({ name: 'Queue' })]);
    expect((await t.http.get(`/v1/views/${created.body.id}/results`).set(agent.auth).expect(200)).body.data).toHaveLength(2);
    await t.http.patch(`/v1/views/${created.body.id}`).set(acme.auth).send({ name: 'Waiting' }).expect(200);
    await t.http.delete(`/v1/views/${created.body.id}`).set(acme.auth).expect(200);
  });

  it.each([
    [{ filter: { field: 'status', op: 'gt', value: 'queued' } }, 'filter.op', 'status takes'],
    [{ filter: { or: [QUEUED, { field: 'attributes.plan', op: 'eq', value: 'x' }] } }, 'filter.or[1].field', 'is not a defined attribute'],
    [{ sort: 'name' }, 'sort', 'sort must be one of created, lastActivity, waiting for conversation views'],
    [{ visibility: 'team' }, 'visibility', 'visibility must be one of'],
    [{ model: 'agent' }, 'model', 'model must be one of'],
    [{ name: '' }, 'name', 'name must not be empty'],
  ])('refuses %j with a 400 naming the field, storing nothing', async (change, field, message) => {
    const response = await create(agent.auth, { name: 'View', model: 'conversation', filter: QUEUED, visibility: 'private', ...change }).expect(400);
    expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message: expect.stringContaining(message) }]));
    expect(await stored()).toEqual([]);
  });

  it('never changes model or visibility', async () => {
    const created = await create(agent.auth, { name: 'View', model: 'conversation', filter: QUEUED, visibility: 'private' }).expect(201);
    const response = await t.http.patch(`/v1/views/${created.body.id}`).set(agent.auth).send({ visibility: 'company' }).expect(400);
    expect(response.body.errors).toEqual([{ field: 'visibility', message: 'visibility never changes: create a new view instead' }]);
    expect(await stored()).toEqual([expect.objectContaining({ visibility: 'private' })]);
  });

  it(`keeps at most ${MAX_PRIVATE_VIEWS_PER_AGENT} private views per agent and ${MAX_COMPANY_VIEWS} company views`, async () => {
    const now = new Date();
    const row = (i: number, visibility: string, ownerId: string) => ({
      companyId: new Types.ObjectId(acme.companyId),
      name: `v${i}`,
      model: 'conversation',
      filter: QUEUED,
      sort: 'created',
      visibility,
      ownerId: new Types.ObjectId(ownerId),
      createdAt: now,
      updatedAt: now,
    });
    await t
      .model(SavedView.name)
      .collection.insertMany([
        ...Array.from({ length: MAX_PRIVATE_VIEWS_PER_AGENT }, (_, i) => row(i, 'private', agent.agentId)),
        ...Array.from({ length: MAX_COMPANY_VIEWS }, (_, i) => row(i, 'company', acme.agentId)),
      ]);
    const refused = await create(agent.auth, { name: 'One more', model: 'conversation', filter: QUEUED, visibility: 'private' }).expect(400);
    expect(refused.body.detail).toBe(`An agent can have at most ${MAX_PRIVATE_VIEWS_PER_AGENT} private views`);
    await create(other.auth, { name: 'Mine', model: 'conversation', filter: QUEUED, visibility: 'private' }).expect(201);
    const company = await create(acme.auth, { name: 'One more', model: 'conversation', filter: QUEUED, visibility: 'company' }).expect(400);
    expect(company.body.detail).toBe(`A company can have at most ${MAX_COMPANY_VIEWS} company views`);
    expect(await stored()).toHaveLength(MAX_PRIVATE_VIEWS_PER_AGENT + MAX_COMPANY_VIEWS + 1);
  });

  it('counts every view the caller sees (and only those)', async () => {
    const queued = await create(acme.auth, { name: 'Queue', model: 'conversation', filter: QUEUED, visibility: 'company' }).expect(201);
    const vip = await create(agent.auth, {
      name: 'VIP',
      model: 'conversation',
      filter: { field: 'attributes.vip', op: 'eq', value: true },
      visibility: 'private',
    }).expect(201);
    const people = await create(agent.auth, {
      name: 'VIP people',
      model: 'contact',
      filter: { field: 'tags', op: 'eq', value: 'vip' },
      sort: 'name',
      visibility: 'private',
    }).expect(201);
    await create(other.auth, { name: 'Not mine', model: 'conversation', filter: QUEUED, visibility: 'private' }).expect(201);
    expect((await t.http.get('/v1/views/counts').set(agent.auth).expect(200)).body).toEqual({
      data: [
        { viewId: queued.body.id, count: 2, capped: false },
        { viewId: vip.body.id, count: 2, capped: false },
        { viewId: people.body.id, count: 1, capped: false },
      ],
    });
    expect((await t.http.get('/v1/views/counts').set(globex.auth).expect(200)).body).toEqual({ data: [] });
  });
});
