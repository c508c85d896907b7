import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { AttributeDefinition, MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL } from '../../src/attributes/attribute-definition.schema.js';
import { ContactAttributes } from '../../src/contacts/contact-attributes.js';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { EventRecorder } from '../support/event-log.js';
import { addAgent, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { expectEventually } from '../support/wait-for.js';

describe('custom attributes (contract section 20)', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let supervisor: TestAgentLogin;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    [agent, supervisor] = [await addAgent(t, acme, 'agent'), await addAgent(t, acme, 'supervisor')];
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await t.model(AttributeDefinition.name).collection.deleteMany({});
    await t.model(Contact.name).collection.deleteMany({});
    await t.model(Conversation.name).collection.deleteMany({});
    await recorder.clear();
  });
  afterAll(() => t.close());

  const define = (auth: { Authorization: string }, body: Record<string, unknown>) => t.http.post('/v1/attribute-definitions').set(auth).send(body);
  const definitions = (company: TestCompany) =>
    t
      .model<AttributeDefinition>(AttributeDefinition.name)
      .collection.find({ companyId: new Types.ObjectId(company.companyId) })
      .toArray();
  const storedContact = (id: string) => t.model<Contact>(Contact.name).collection.findOne({ _id: new Types.ObjectId(id) });

  async function standardDefinitions(company = acme): Promise<void> {
    await define(company.auth, { model: 'contact', key: 'plan', label: 'Plan', type: 'list', options: ['free', 'pro'] }).expect(201);
    await define(company.auth, { model: 'contact', key: 'seats', label: 'Seats', type: 'number' }).expect(201);
    await define(company.auth, { model: 'contact', key: 'renews_on', label: 'Renews on', type: 'date' }).expect(201);
    await define(company.auth, { model: 'contact', key: 'trial', label: 'Trial', type: 'boolean' }).expect(201);
    await define(company.auth, { model: 'conversation', key: 'order_number', label: 'Order', type: 'text' }).expect(201);
  }

  describe('definitions', () => {
    it('creates, lists, reads, updates and deletes (admin); agents read only (403 writes nothing)', async () => {
      const created = await define(acme.auth, {
        model: 'contact',
        key: 'plan',
        label: 'Plan',
        type: 'list',
        options: ['free', 'pro'],
        description: 'Subscription',
      }).expect(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        model: 'contact',
        key: 'plan',
        label: 'Plan',
        type: 'list',
        options: ['free', 'pro'],
        description: 'Subscription',
        archived: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const path = `/v1/attribute-definitions/${created.body.id}`;
      expect((await t.http.get('/v1/attribute-definitions').set(agent.auth).expect(200)).body).toEqual({ data: [created.body] });
      expect((await t.http.get('/v1/attribute-definitions?model=conversation').set(agent.auth).expect(200)).body).toEqual({ data: [] });
      expect((await t.http.get(path).set(agent.auth).expect(200)).body).toEqual(created.body);

      await define(supervisor.auth, { model: 'contact', key: 'seats', label: 'Seats', type: 'number' }).expect(403);
      await t.http.patch(path).set(agent.auth).send({ label: 'X' }).expect(403);
      await t.http.delete(path).set(supervisor.auth).expect(403);
      expect(await definitions(acme)).toEqual([expect.objectContaining({ key: 'plan', label: 'Plan' })]);

      const patched = await t.http
        .patch(path)
        .set(acme.auth)
        .send({ label: 'Plan name', options: ['free', 'pro', 'team'], archived: true })
        .expect(200);
      expect(patched.body).toMatchObject({ label: 'Plan name', options: ['free', 'pro', 'team'], archived: true, type: 'list' });
      expect((await t.http.delete(path).set(acme.auth).expect(200)).body).toEqual({ id: created.body.id, deleted: true });
      await t.http.get(path).set(acme.auth).expect(404);
      // Stored until its audit entry is chained, a moment after the answer (removablePlugin).
      await expectEventually(() => definitions(acme), []);
    });

    it('keeps keys unique per model (409), not across models or companies; another company sees 404', async () => {
      const plan = await define(acme.auth, { model: 'contact', key: 'plan', label: 'Plan', type: 'text' }).expect(201);
      const duplicate = await define(acme.auth, { model: 'contact', key: 'plan', label: 'Other', type: 'number' }).expect(409);
      expect(duplicate.body.detail).toBe('A contact attribute with key "plan" already exists in your company');
      await define(acme.auth, { model: 'conversation', key: 'plan', label: 'Plan', type: 'text' }).expect(201);
      await define(globex.auth, { model: 'contact', key: 'plan', label: 'Plan', type: 'text' }).expect(201);
      await t.http.get(`/v1/attribute-definitions/${plan.body.id}`).set(globex.auth).expect(404);
      await t.http.patch(`/v1/attribute-definitions/${plan.body.id}`).set(globex.auth).send({ label: 'Mine' }).expect(404);
      await t.http.delete(`/v1/attribute-definitions/${plan.body.id}`).set(globex.auth).expect(404);
      expect((await definitions(acme)).map((d) => `${d.model}.${d.key}`).sort()).toEqual(['contact.plan', 'conversation.plan']);
    });

    it.each([
      ['an upper-case key', { key: 'Plan' }, 'key', 'key must be a lower-case letter'],
      ['a key starting with a digit', { key: '1plan' }, 'key', 'key must be'],
      ['a key too long', { key: 'a'.repeat(65) }, 'key', 'key must be'],
      ['an unknown model', { model: 'agent' }, 'model', 'model must be one of'],
      ['an unknown type', { type: 'json' }, 'type', 'type must be one of'],
      ['a list without options', { type: 'list' }, 'options', 'options must list the values'],
      ['options on a text', { options: ['a'] }, 'options', 'options are for list attributes only'],
      [
        'too many options',
        { type: 'list', options: Array.from({ length: 201 }, (_, i) => `o${i}`) },
        'options',
        'options must contain no more than 200',
      ],
      ['an empty label', { label: '' }, 'label', 'label must not be empty'],
    ])('refuses %s with a 400 naming the field, storing nothing', async (_, change, field, message) => {
      const response = await define(acme.auth, { model: 'contact', key: 'plan', label: 'Plan', type: 'text', ...change }).expect(400);
      expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message: expect.stringContaining(message) }]));
      expect(await definitions(acme)).toEqual([]);
    });

    it.each(['model', 'key', 'type'])('never changes %s (400, nothing changed)', async (field) => {
      const created = await define(acme.auth, { model: 'contact', key: 'plan', label: 'Plan', type: 'text' }).expect(201);
      const response = await t.http
        .patch(`/v1/attribute-definitions/${created.body.id}`)
        .set(acme.auth)
        .send({ [field]: 'x', label: 'New' })
        .expect(400);
      expect(response.body.errors).toEqual([{ field, message: `${field} never changes: define a new attribute (and archive this one) instead` }]);
      expect(await definitions(acme)).toEqual([expect.objectContaining({ model: 'contact', key: 'plan', type: 'text', label: 'Plan' })]);
    });

    it(`allows at most ${MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL} per model`, async () => {
      const now = new Date();
      await t.model(AttributeDefinition.name).collection.insertMany(
        Array.from({ length: MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL }, (_, i) => ({
          companyId: new Types.ObjectId(acme.companyId),
          model: 'contact',
          key: `k${i}`,
          label: `K${i}`,
          type: 'text',
          options: [],
          description: null,
          archived: false,
          createdAt: now,
          updatedAt: now,
        })),
      );
      const refused = await define(acme.auth, { model: 'contact', key: 'one_more', label: 'One more', type: 'text' }).expect(400);
      expect(refused.body.detail).toContain(`at most ${MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL} contact attributes`);
      await define(acme.auth, { model: 'conversation', key: 'one_more', label: 'One more', type: 'text' }).expect(201);
      expect(await definitions(acme)).toHaveLength(MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL + 1);
    });
  });

  describe('values', () => {
    it('stores typed contact values, answers dates as ISO-8601, merges on PATCH and removes null keys', async () => {
      await standardDefinitions();
      const created = await t.http
        .post('/v1/contacts')
        .set(agent.auth)
        .send({ name: 'Grace', attributes: { plan: 'pro', seats: 12, renews_on: '2027-01-31', trial: false } })
        .expect(201);
      expect(created.body.attributes).toEqual({ plan: 'pro', seats: 12, renews_on: '2027-01-31T00:00:00.000Z', trial: false });
      expect((await storedContact(created.body.id))?.attributes.renews_on).toEqual(new Date('2027-01-31T00:00:00Z'));

      const patched = await t.http
        .patch(`/v1/contacts/${created.body.id}`)
        .set(agent.auth)
        .send({ attributes: { seats: 15, trial: null } })
        .expect(200);
      expect(patched.body.attributes).toEqual({ plan: 'pro', seats: 15, renews_on: '2027-01-31T00:00:00.000Z' });
      expect((await t.http.get(`/v1/contacts/${created.body.id}`).set(agent.auth).expect(200)).body.attributes).toEqual(patched.body.attributes);
    });

    it.each([
      ['an unknown key', { nickname: 'x' }, 'attributes.nickname', 'is not a contact attribute of your company'],
      ['a conversation key on a contact', { order_number: '1' }, 'attributes.order_number', 'is not a contact attribute'],
      ['a string for a number', { seats: '12' }, 'attributes.seats', 'must be a finite number'],
      ['a number for a boolean', { trial: 1 }, 'attributes.trial', 'must be true or false'],
      ['an impossible date', { renews_on: '2027-02-30' }, 'attributes.renews_on', 'must be a date'],
      ['a time without zone', { renews_on: '2027-02-01T10:00' }, 'attributes.renews_on', 'must be a date'],
      ['an option not listed', { plan: 'gold' }, 'attributes.plan', 'must be one of "free", "pro"'],
    ])('refuses %s on a contact with a 400 naming the key, storing nothing', async (_, attributes, field, message) => {
      await standardDefinitions();
      const response = await t.http.post('/v1/contacts').set(agent.auth).send({ name: 'Grace', attributes }).expect(400);
      expect(response.body.errors).toEqual([{ field, message: expect.stringContaining(message) }]);
      expect(await t.model(Contact.name).collection.countDocuments({})).toBe(0);
    });

    it('refuses an archived key but lets null remove it; text is at most 1000 characters', async () => {
      await standardDefinitions();
      const contact = await t.http
        .post('/v1/contacts')
        .set(agent.auth)
        .send({ name: 'Grace', attributes: { seats: 3 } })
        .expect(201);
      const seats = (await definitions(acme)).find((d) => d.key === 'seats')!;
      await t.http.patch(`/v1/attribute-definitions/${seats._id.toHexString()}`).set(acme.auth).send({ archived: true }).expect(200);
      const refused = await t.http
        .patch(`/v1/contacts/${contact.body.id}`)
        .set(agent.auth)
        .send({ attributes: { seats: 4 } })
        .expect(400);
      expect(refused.body.errors).toEqual([{ field: 'attributes.seats', message: expect.stringContaining('is archived') }]);
      expect((await storedContact(contact.body.id))?.attributes).toEqual({ seats: 3 });
      await t.http
        .patch(`/v1/contacts/${contact.body.id}`)
        .set(agent.auth)
        .send({ attributes: { seats: null } })
        .expect(200);
      expect((await storedContact(contact.body.id))?.attributes).toEqual({});
    });

    it('keeps values of another company apart: its definitions do not apply here', async () => {
      await standardDefinitions(globex);
      const response = await t.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({ name: 'Grace', attributes: { seats: 1 } })
        .expect(400);
      expect(response.body.errors).toEqual([{ field: 'attributes.seats', message: expect.stringContaining('is not a contact attribute') }]);
    });

    it('stores conversation values and emits conversation.updated with changes', async () => {
      await standardDefinitions();
      const contact = await t.http.post('/v1/contacts').set(agent.auth).send({ name: 'Grace', email: 'grace@example.com' }).expect(201);
      const conversation = await t.http.post('/v1/conversations').set(agent.auth).send({ contactId: contact.body.id }).expect(201);
      expect(conversation.body.attributes).toEqual({});
      await recorder.clear();
      const path = `/v1/conversations/${conversation.body.id}`;
      const refused = await t.http
        .patch(path)
        .set(agent.auth)
        .send({ attributes: { plan: 'pro' } })
        .expect(400);
      expect(refused.body.errors).toEqual([{ field: 'attributes.plan', message: expect.stringContaining('is not a conversation attribute') }]);
      const patched = await t.http
        .patch(path)
        .set(agent.auth)
        .send({ attributes: { order_number: '1042' }, subject: 'Refund' })
        .expect(200);
      expect(patched.body).toMatchObject({ attributes: { order_number: '1042' }, subject: 'Refund' });
      await t.http
        .patch(path)
        .set(agent.auth)
        .send({ attributes: { order_number: '1042' } })
        .expect(200);
      const events = (await recorder.events()).filter((event) => event.type === 'conversation.updated');
      expect(events).toHaveLength(1);
      expect(events[0].data).toEqual({
        conversation: expect.objectContaining({ id: conversation.body.id, attributes: { order_number: '1042' }, subject: 'Refund' }),
        changes: { subject: [null, 'Refund'], 'attributes.order_number': [null, '1042'] },
      });
    });

    it('removes the values of a deleted definition from every record', async () => {
      await standardDefinitions();
      const a = await t.http
        .post('/v1/contacts')
        .set(agent.auth)
        .send({ name: 'A', attributes: { seats: 1, plan: 'pro' } })
        .expect(201);
      const b = await t.http
        .post('/v1/contacts')
        .set(agent.auth)
        .send({ name: 'B', attributes: { seats: 2 } })
        .expect(201);
      await standardDefinitions(globex);
      const other = await t.http
        .post('/v1/contacts')
        .set(globex.auth)
        .send({ name: 'C', attributes: { seats: 3 } })
        .expect(201);
      const seats = (await definitions(acme)).find((d) => d.key === 'seats')!;
      await t.http.delete(`/v1/attribute-definitions/${seats._id.toHexString()}`).set(acme.auth).expect(200);
      expect((await storedContact(a.body.id))?.attributes).toEqual({ plan: 'pro' });
      expect((await storedContact(b.body.id))?.attributes).toEqual({});
      expect((await storedContact(other.body.id))?.attributes).toEqual({ seats: 3 });
    });
  });

  describe('contact events', () => {
    it('emits contact.created, contact.updated with changes (none when nothing changed) and contact.deleted', async () => {
      await standardDefinitions();
      const created = await t.http
        .post('/v1/contacts')
        .set(agent.auth)
        .send({ name: 'Grace', attributes: { seats: 1 } })
        .expect(201);
      await t.http
        .patch(`/v1/contacts/${created.body.id}`)
        .set(agent.auth)
        .send({ name: 'Grace H', attributes: { seats: 2, plan: 'pro' } })
        .expect(200);
      await t.http.patch(`/v1/contacts/${created.body.id}`).set(agent.auth).send({ name: 'Grace H' }).expect(200);
      await t.http.delete(`/v1/contacts/${created.body.id}`).set(supervisor.auth).expect(200);
      const events = (await recorder.events()).filter((event) => event.type.startsWith('contact.'));
      expect(events.map((event) => [event.type, event.data])).toEqual([
        ['contact.created', { contact: created.body }],
        [
          'contact.updated',
          {
            contact: expect.objectContaining({ id: created.body.id, name: 'Grace H', attributes: { seats: 2, plan: 'pro' } }),
            changes: { name: ['Grace', 'Grace H'], 'attributes.seats': [1, 2], 'attributes.plan': [null, 'pro'] },
          },
        ],
        ['contact.deleted', { contactId: created.body.id }],
      ]);
      expect(await t.model(Contact.name).collection.countDocuments({})).toBe(0);
    });
  });

  describe('the one-time migration of stored keys', () => {
    it('defines the keys contacts already hold, typed by their values, once and idempotently', async () => {
      const companyId = new Types.ObjectId(acme.companyId);
      const now = new Date();
      await t.model(Contact.name).collection.insertMany([
        { companyId, name: 'A', tags: [], attributes: { seats: 3, vip: true, note: 'hi', mixed: 1 }, createdAt: now, updatedAt: now },
        { companyId, name: 'B', tags: [], attributes: { seats: 5, mixed: 'two' }, createdAt: now, updatedAt: now },
        { companyId: new Types.ObjectId(globex.companyId), name: 'C', tags: [], attributes: { seats: 'many' }, createdAt: now, updatedAt: now },
      ]);
      await define(acme.auth, { model: 'contact', key: 'note', label: 'Note', type: 'list', options: ['hi'] }).expect(201);
      const migration = t.app.get(ContactAttributes);
      await migration.defineStoredKeys();
      await migration.defineStoredKeys();
      const typed = (company: TestCompany) => definitions(company).then((rows) => Object.fromEntries(rows.map((d) => [d.key, d.type])));
      expect(await typed(acme)).toEqual({ seats: 'number', vip: 'boolean', note: 'list', mixed: 'text' });
      expect(await typed(globex)).toEqual({ seats: 'text' });
      const a = await t.model<Contact>(Contact.name).collection.findOne({ name: 'A' });
      await t.http
        .patch(`/v1/contacts/${a!._id.toHexString()}`)
        .set(acme.auth)
        .send({ attributes: { seats: 4, mixed: 'x' } })
        .expect(200);
    });
  });
});
