import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { FilterCompiler } from '../../src/search/filter-compiler.js';
import { matchesFilter } from '../../src/filters/index.js';
import { addAgent, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('POST /v1/conversations/search and /v1/contacts/search', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  const conversationIds: string[] = [];
  const contactIds: string[] = [];

  const searchConversations = (auth: { Authorization: string }, body: Record<string, unknown>) =>
    t.http.post('/v1/conversations/search').set(auth).send(body);
  const searchContacts = (auth: { Authorization: string }, body: Record<string, unknown>) => t.http.post('/v1/contacts/search').set(auth).send(body);

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
    for (const company of [acme, globex]) {
      await t.http
        .post('/v1/attribute-definitions')
        .set(company.auth)
        .send({ model: 'contact', key: 'plan', label: 'Plan', type: 'list', options: ['free', 'pro'] })
        .expect(201);
      await t.http
        .post('/v1/attribute-definitions')
        .set(company.auth)
        .send({ model: 'conversation', key: 'amount', label: 'Amount', type: 'number' })
        .expect(201);
      await t.http
        .post('/v1/attribute-definitions')
        .set(company.auth)
        .send({ model: 'conversation', key: 'due', label: 'Due', type: 'date' })
        .expect(201);
    }
    const people = [
      { name: 'Ada', plan: 'pro', tags: ['vip'] },
      { name: 'Grace', plan: 'free', tags: [] },
      { name: 'Linus', plan: 'pro', tags: ['beta'] },
      { name: 'Barbara', plan: null, tags: ['vip', 'beta'] },
    ];
    for (const [i, person] of people.entries()) {
      const contact = await t.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({
          name: person.name,
          email: `${person.name.toLowerCase()}@example.com`,
          tags: person.tags,
          ...(person.plan ? { attributes: { plan: person.plan } } : {}),
        })
        .expect(201);
      contactIds.push(contact.body.id);
      for (const channel of ['api', 'web']) {
        const conversation = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id, channel }).expect(201);
        conversationIds.push(conversation.body.id);
        const attributes = channel === 'api' ? { amount: 10 * (i + 1), due: `2026-0${i + 1}-15` } : {};
        await t.http
          .patch(`/v1/conversations/${conversation.body.id}`)
          .set(acme.auth)
          .send({ attributes, tags: i % 2 ? ['refund'] : [], subject: `Order ${1000 + i} ${channel}`, ...(i === 3 ? { status: 'queued' } : {}) })
          .expect(200);
        if (i === 2 && channel === 'web')
          await t.http.post(`/v1/conversations/${conversation.body.id}/assign`).set(acme.auth).send({ agentId: agent.agentId }).expect(200);
      }
    }
    // Another company's records hold the same values: they never match.
    const foreign = await t.http
      .post('/v1/contacts')
      .set(globex.auth)
      .send({ name: 'Ada', attributes: { plan: 'pro' }, tags: ['vip'] })
      .expect(201);
    const foreignConversation = await t.http.post('/v1/conversations').set(globex.auth).send({ contactId: foreign.body.id }).expect(201);
    await t.http
      .patch(`/v1/conversations/${foreignConversation.body.id}`)
      .set(globex.auth)
      .send({ attributes: { amount: 10 }, subject: 'Order 1000 api' })
      .expect(200);
  });
  afterAll(() => t.close());

  const FILTERS: unknown[] = [
    { field: 'attributes.amount', op: 'gte', value: 20 },
    { field: 'attributes.amount', op: 'ne', value: 20 },
    { field: 'attributes.amount', op: 'exists', value: false },
    { field: 'attributes.due', op: 'between', value: ['2026-02-01', '2026-03-31'] },
    { field: 'attributes.due', op: 'olderThan', value: '30d' },
    { field: 'tags', op: 'eq', value: 'refund' },
    { field: 'tags', op: 'nin', value: ['refund'] },
    { field: 'subject', op: 'contains', value: 'WEB' },
    { field: 'subject', op: 'startsWith', value: 'order 100' },
    { field: 'status', op: 'in', value: ['queued', 'human'] },
    { field: 'channel', op: 'eq', value: 'web' },
    { field: 'createdAt', op: 'withinLast', value: '1h' },
    { field: 'snoozed', op: 'eq', value: false },
    { field: 'slaBreached', op: 'eq', value: true },
    { field: 'contact.tags', op: 'eq', value: 'vip' },
    { field: 'contact.attributes.plan', op: 'eq', value: 'pro' },
    { field: 'contact.attributes.plan', op: 'exists', value: false },
    {
      or: [
        { field: 'status', op: 'eq', value: 'queued' },
        {
          and: [
            { field: 'channel', op: 'eq', value: 'api' },
            { field: 'contact.attributes.plan', op: 'ne', value: 'free' },
          ],
        },
      ],
    },
  ];

  it.each(FILTERS.map((filter) => [JSON.stringify(filter), filter]))('finds what the in-memory evaluator finds: %s', async (_, filter) => {
    const response = await searchConversations(agent.auth, { filter, limit: 100 }).expect(200);
    const found = response.body.data.map((c: { id: string }) => c.id).sort();
    const compiler = t.app.get(FilterCompiler);
    const parsed = await compiler.parse(acme.companyId, 'conversation', filter);
    const records = await t
      .model(Conversation.name)
      .collection.find({ companyId: new Types.ObjectId(acme.companyId) })
      .toArray();
    const contacts = new Map((await t.model(Contact.name).collection.find({}).toArray()).map((c) => [String(c._id), c]));
    const expected = records
      .filter((record) => matchesFilter(parsed, { record, contact: contacts.get(String(record.contactId)) ?? null }, { now: new Date() }))
      .map((record) => String(record._id))
      .sort();
    expect(found).toEqual(expected);
    expect(found.every((id: string) => conversationIds.includes(id))).toBe(true);
  });

  it('shows conversations as GET /v1/conversations does, and pages by cursor in the sort asked for', async () => {
    const listed = await t.http.get('/v1/conversations?limit=100').set(agent.auth).expect(200);
    const searched = await searchConversations(agent.auth, { filter: { field: 'channel', op: 'in', value: ['api', 'web'] }, limit: 100 }).expect(200);
    expect(searched.body).toEqual(listed.body);
    // The second filter is an `$or`, like the cursor's own: the pages after the first keep it.
    const api = { field: 'channel', op: 'eq', value: 'api' };
    for (const filter of [api, { or: [api, { ...api, op: 'in', value: ['api'] }] }]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await searchConversations(agent.auth, { filter, sort: 'lastActivity', limit: 3, cursor }).expect(200);
        seen.push(...page.body.data.map((c: { id: string }) => c.id));
        cursor = page.body.nextCursor ?? undefined;
      } while (cursor);
      expect(seen).toHaveLength(4);
      expect(new Set(seen).size).toBe(4);
    }
  });

  it.each([
    [{ filter: { field: 'status', op: 'gt', value: 'bot' } }, 'filter.op', 'status takes eq, ne, in, nin, exists, contains, startsWith, not gt'],
    [
      {
        filter: {
          and: [
            { field: 'status', op: 'eq', value: 'bot' },
            { field: 'attributes.amount', op: 'eq', value: '10' },
          ],
        },
      },
      'filter.and[1].value',
      'must be a finite number',
    ],
    [{ filter: { field: 'attributes.nope', op: 'eq', value: 'x' } }, 'filter.field', 'is not a defined attribute'],
    [{ filter: { field: 'status', op: 'eq', value: ['queued'] } }, 'filter.value', 'must be a string'],
    [{ filter: { field: 'status', op: 'eq', value: 'bot' }, sort: 'name' }, 'sort', 'sort must be one of'],
    [{ filter: 'status' }, 'filter', 'filter must be an object'],
    [{}, 'filter', 'filter must be an object'],
    [{ filter: { field: 'status', op: 'eq', value: 'bot' }, cursor: 'nope' }, 'startAfter', 'not a cursor'],
  ])('refuses %j with a 400 naming the place', async (body, field, message) => {
    const response = await searchConversations(agent.auth, body).expect(400);
    expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message: expect.stringContaining(message) }]));
  });

  it('never lets a MongoDB operator through, as a key or as a field', async () => {
    const asKey = await searchConversations(agent.auth, { filter: { field: 'status', op: 'eq', value: { $ne: 'x' } } }).expect(400);
    expect(asKey.body.detail).toContain('Field names starting with "$" are not allowed');
    const asField = await searchConversations(agent.auth, { filter: { field: '_id', op: 'exists', value: true } }).expect(400);
    expect(asField.body.errors).toEqual([{ field: 'filter.field', message: expect.stringContaining('must be one of') }]);
  });

  it('is served by an index led by companyId, the wildcard index for attributes', async () => {
    const compiler = t.app.get(FilterCompiler);
    const indexOf = async (filter: unknown) => {
      const query = await compiler.query(acme.companyId, await compiler.parse(acme.companyId, 'conversation', filter));
      const explained = await t
        .model(Conversation.name)
        .collection.find({ ...query, companyId: new Types.ObjectId(acme.companyId) })
        .explain('executionStats');
      let stage = explained.queryPlanner.winningPlan;
      while (stage && stage.stage !== 'IXSCAN') stage = stage.inputStage;
      return stage?.keyPattern ?? stage?.indexName ?? null;
    };
    expect(
      JSON.stringify(
        await indexOf({
          and: [
            { field: 'attributes.amount', op: 'eq', value: 20 },
            { field: 'status', op: 'in', value: ['bot', 'queued'] },
          ],
        }),
      ),
    ).toContain('attributes.$**');
    for (const field of ['channel', 'tags', 'subject'])
      expect(JSON.stringify(await indexOf({ field, op: 'eq', value: 'web' }))).toContain('companyId');
    expect(JSON.stringify(await indexOf({ field: 'csatRating', op: 'gte', value: 4 }))).toContain('companyId');
    expect(JSON.stringify(await indexOf({ field: 'lastMessageAt', op: 'withinLast', value: '1d' }))).toContain('companyId');
  });

  it('refuses a contact condition matching more than 1000 contacts, asking for a narrower one', async () => {
    const now = new Date();
    await t.model(Contact.name).collection.insertMany(
      Array.from({ length: 1001 }, (_, i) => ({
        companyId: new Types.ObjectId(acme.companyId),
        name: `Bulk ${i}`,
        tags: ['bulk'],
        attributes: {},
        createdAt: now,
        updatedAt: now,
      })),
    );
    try {
      const response = await searchConversations(agent.auth, {
        filter: {
          and: [
            { field: 'channel', op: 'eq', value: 'api' },
            { field: 'contact.tags', op: 'eq', value: 'bulk' },
          ],
        },
      }).expect(400);
      expect(response.body.errors).toEqual([
        { field: 'filter.and[1]', message: expect.stringContaining('matches more than 1000 contacts: narrow it') },
      ]);
    } finally {
      await t.model(Contact.name).collection.deleteMany({ tags: 'bulk' });
    }
  });

  it('searches contacts by created (newest first) and by name (A to Z), with cursors, within the company', async () => {
    const all = await searchContacts(agent.auth, { filter: { field: 'email', op: 'contains', value: 'EXAMPLE.COM' } }).expect(200);
    expect(all.body.data.map((c: { name: string }) => c.name)).toEqual(['Barbara', 'Linus', 'Grace', 'Ada']);
    const pro = await searchContacts(agent.auth, { filter: { field: 'attributes.plan', op: 'eq', value: 'pro' }, sort: 'name' }).expect(200);
    expect(pro.body).toEqual({
      data: [expect.objectContaining({ name: 'Ada', attributes: { plan: 'pro' } }), expect.objectContaining({ name: 'Linus' })],
      nextCursor: null,
    });
    const names: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await searchContacts(agent.auth, { filter: { field: 'tags', op: 'exists', value: true }, sort: 'name', limit: 1, cursor }).expect(
        200,
      );
      names.push(...page.body.data.map((c: { name: string }) => c.name));
      cursor = page.body.nextCursor ?? undefined;
    } while (cursor);
    expect(names).toEqual(['Ada', 'Barbara', 'Grace', 'Linus']);
    const foreign = await searchContacts(globex.auth, { filter: { field: 'name', op: 'eq', value: 'Grace' } }).expect(200);
    expect(foreign.body).toEqual({ data: [], nextCursor: null });
    const bad = await searchContacts(agent.auth, { filter: { field: 'status', op: 'eq', value: 'bot' } }).expect(400);
    expect(bad.body.errors).toEqual([{ field: 'filter.field', message: expect.stringContaining('must be one of name, email') }]);
    expect(contactIds).toHaveLength(4);
  });
});
