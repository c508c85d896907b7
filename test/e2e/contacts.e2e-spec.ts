import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BadRequestException } from '@nestjs/common';
import { Contact } from '../../src/contacts/contact.schema.js';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { ContactsService } from '../../src/contacts/contacts.service.js';
import { addAgent, registerCompany, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface ContactBody {
  id: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  tags: string[];
  attributes: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

describe('/v1/contacts', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
  });
  afterAll(() => t.close());

  async function create(company: TestCompany, body: object): Promise<ContactBody> {
    const response = await t.http.post('/v1/contacts').set(company.auth).send(body).expect(201);
    return response.body as ContactBody;
  }

  async function stored(company: TestCompany, id: string) {
    return t.model<Contact>(Contact.name).findOne({ _id: id, companyId: company.companyId }).lean();
  }

  /** Contact attributes must be defined (contract section 20); a definition made by an earlier test stays. */
  async function defineAttributes(company: TestCompany, types: Record<string, string>): Promise<void> {
    for (const [key, type] of Object.entries(types)) {
      const response = await t.http.post('/v1/attribute-definitions').set(company.auth).send({ model: 'contact', key, label: key, type });
      expect([201, 409]).toContain(response.status);
    }
  }

  describe('create', () => {
    it('normalises e-mail, phone and tags and stores typed attributes (null leaves a key out)', async () => {
      await defineAttributes(acme, { plan: 'text', seats: 'number', trial: 'boolean', referrer: 'text' });
      const response = await t.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({
          name: '  Grace Hopper ',
          email: ' Grace.Hopper@Navy.Example ',
          phone: '+1 (415) 555-2671',
          tags: ['vip', ' vip', 'beta'],
          attributes: { plan: 'pro', seats: 12, trial: false, referrer: null },
        })
        .expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        name: 'Grace Hopper',
        email: 'grace.hopper@navy.example',
        phone: '+14155552671',
        tags: ['vip', 'beta'],
        attributes: { plan: 'pro', seats: 12, trial: false },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const record = await stored(acme, response.body.id);
      expect(record).toMatchObject({ email: 'grace.hopper@navy.example', phone: '+14155552671', tags: ['vip', 'beta'] });
      expect(record?.attributes).toEqual({ plan: 'pro', seats: 12, trial: false });
    });

    it('reads digits without "+" as an international number and needs no more than one identity field', async () => {
      const byPhone = await create(acme, { phone: '442079460958' });
      expect(byPhone).toMatchObject({ phone: '+442079460958', name: null, email: null, tags: [], attributes: {} });
      const byName = await create(acme, { name: 'Walk-in customer' });
      expect(byName).toMatchObject({ name: 'Walk-in customer', phone: null, email: null });
    });

    it('refuses a contact without name, e-mail or phone', async () => {
      const empty = await t.http.post('/v1/contacts').set(acme.auth).send({}).expect(400);
      expect(empty.body.message).toBe('A contact needs at least one of name, email or phone');
      await t.http.post('/v1/contacts').set(acme.auth).send({ tags: ['vip'] }).expect(400);
    });

    it('refuses an invalid phone, naming the field', async () => {
      for (const phone of ['12', 'call me', '+1 415 555 2671 ext 9', '(415) 555-2671']) {
        const response = await t.http.post('/v1/contacts').set(acme.auth).send({ phone }).expect(400);
        expect(response.body.errors).toEqual([{ field: 'phone', message: expect.stringContaining('phone must be') }]);
      }
    });

    it.each([
      ['an invalid e-mail', { email: 'not-an-email' }, 'email'],
      ['a number for a name', { name: 5 }, 'name'],
      ['an empty name', { name: '   ' }, 'name'],
      ['a null name', { name: null }, 'name'],
      ['a string for tags', { name: 'x', tags: 'vip' }, 'tags'],
      ['a tag that is not a string', { name: 'x', tags: [1] }, 'tags'],
      ['a tag that is not a string', { name: 'x', tags: [42] }, 'tags'],
      ['a tag of 51 characters', { name: 'x', tags: ['t'.repeat(51)] }, 'tags'],
      ['51 tags', { name: 'x', tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }, 'tags'],
      ['nested attributes', { name: 'x', attributes: { address: { city: 'Paris' } } }, 'attributes'],
      ['an array attribute', { name: 'x', attributes: { list: [1, 2] } }, 'attributes'],
      ['attributes as an array', { name: 'x', attributes: ['a'] }, 'attributes'],
      ['a dotted attribute key', { name: 'x', attributes: { 'a.b': 1 } }, 'attributes'],
      ['51 attributes', { name: 'x', attributes: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 'attributes'],
      ['an unknown field', { name: 'x', company: 'y' }, 'company'],
    ])('400 for %s', async (_, body, field) => {
      const response = await t.http.post('/v1/contacts').set(acme.auth).send(body).expect(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
    });

    it('trims tags and drops blank ones and repeats before the caps apply', async () => {
      const others = Array.from({ length: 49 }, (_, i) => `t${i}`);
      const response = await t.http
        .post('/v1/contacts')
        .set(acme.auth)
        .send({ name: 'Tagged', tags: [' vip ', '', 'vip', '   ', ...others, 't0 '] })
        .expect(201);
      expect(response.body.tags).toEqual(['vip', ...others]);
    });

    it('400 for $-operators in a body, attributes included', async () => {
      await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'x', attributes: { $where: '1' } }).expect(400);
      await t.http.post('/v1/contacts').set(acme.auth).send({ email: { $gt: '' } }).expect(400);
      expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId, name: 'x' })).toBe(0);
    });

    it('409 on a duplicate e-mail or phone in the company, naming the field; another company may reuse them', async () => {
      await create(acme, { email: 'dup@example.com', phone: '+33 6 12 34 56 78' });
      const email = await t.http.post('/v1/contacts').set(acme.auth).send({ email: 'DUP@example.com' }).expect(409);
      expect(email.body).toMatchObject({ status: 409, message: expect.stringContaining('email') });
      const phone = await t.http.post('/v1/contacts').set(acme.auth).send({ phone: '0033612345678' }).expect(409);
      expect(phone.body.message).toContain('phone');
      expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: acme.companyId, email: 'dup@example.com' })).toBe(1);

      const elsewhere = await create(globex, { email: 'dup@example.com', phone: '+33612345678' });
      expect(elsewhere).toMatchObject({ email: 'dup@example.com', phone: '+33612345678' });
    });

    it('401 without a token', async () => {
      await t.http.post('/v1/contacts').send({ name: 'x' }).expect(401);
      await t.http.get('/v1/contacts').expect(401);
    });
  });

  describe('get, update and delete', () => {
    it('gets a contact by id; a malformed, missing or foreign id is a 404', async () => {
      const contact = await create(acme, { name: 'Ada', email: 'ada@example.com' });
      const found = await t.http.get(`/v1/contacts/${contact.id}`).set(acme.auth).expect(200);
      expect(found.body).toEqual(contact);
      await t.http.get('/v1/contacts/not-an-id').set(acme.auth).expect(404);
      await t.http.get('/v1/contacts/6650f0c2a1b2c3d4e5f60719').set(acme.auth).expect(404);
      const foreign = await t.http.get(`/v1/contacts/${contact.id}`).set(globex.auth).expect(404);
      expect(foreign.body).toMatchObject({ status: 404, message: `Contact ${contact.id} not found` });
      expect(JSON.stringify(foreign.body)).not.toContain('ada@example.com');
    });

    it('updates only the fields sent; null clears; tags are replaced, attributes merged', async () => {
      await defineAttributes(acme, { plan: 'text', seats: 'number' });
      const contact = await create(acme, {
        name: 'Linus',
        email: 'linus@example.com',
        phone: '+1 202 555 0125',
        tags: ['a', 'b'],
        attributes: { plan: 'free', seats: 1 },
      });
      await new Promise((resolve) => setTimeout(resolve, 5));
      const response = await t.http
        .patch(`/v1/contacts/${contact.id}`)
        .set(acme.auth)
        .send({ email: null, phone: '12025550199', tags: ['c'], attributes: { plan: 'pro' } })
        .expect(200);
      expect(response.body).toMatchObject({
        id: contact.id,
        name: 'Linus',
        email: null,
        phone: '+12025550199',
        tags: ['c'],
        attributes: { plan: 'pro', seats: 1 },
        createdAt: contact.createdAt,
      });
      expect(Date.parse(response.body.updatedAt)).toBeGreaterThan(Date.parse(contact.updatedAt));
      const record = await stored(acme, contact.id);
      expect(record).not.toHaveProperty('email');
      expect(record?.attributes).toEqual({ plan: 'pro', seats: 1 });

      const unchanged = await t.http.patch(`/v1/contacts/${contact.id}`).set(acme.auth).send({}).expect(200);
      expect(unchanged.body).toEqual(response.body);
    });

    it('refuses to clear the last identity field, bad values, and a taken e-mail (409)', async () => {
      const contact = await create(acme, { name: 'Only name' });
      const cleared = await t.http.patch(`/v1/contacts/${contact.id}`).set(acme.auth).send({ name: null }).expect(400);
      expect(cleared.body.message).toBe('A contact needs at least one of name, email or phone');
      await t.http.patch(`/v1/contacts/${contact.id}`).set(acme.auth).send({ phone: 'abc' }).expect(400);
      await t.http.patch(`/v1/contacts/${contact.id}`).set(acme.auth).send({ tags: null }).expect(400);
      await t.http.patch(`/v1/contacts/${contact.id}`).set(acme.auth).send({ id: 'x' }).expect(400);

      await create(acme, { email: 'taken@example.com' });
      const taken = await t.http
        .patch(`/v1/contacts/${contact.id}`)
        .set(acme.auth)
        .send({ email: 'Taken@Example.com' })
        .expect(409);
      expect(taken.body.message).toContain('email');
      expect(await stored(acme, contact.id)).toMatchObject({ name: 'Only name' });
      expect((await stored(acme, contact.id))?.email).toBeUndefined();
    });

    it('404 when patching or deleting another company\'s contact, which stays unchanged', async () => {
      const contact = await create(acme, { name: 'Private', email: 'private@example.com' });
      await t.http.patch(`/v1/contacts/${contact.id}`).set(globex.auth).send({ name: 'Hijacked' }).expect(404);
      await t.http.delete(`/v1/contacts/${contact.id}`).set(globex.auth).expect(404);
      await t.http.patch('/v1/contacts/zzz').set(acme.auth).send({ name: 'x' }).expect(404);
      expect(await stored(acme, contact.id)).toMatchObject({ name: 'Private', email: 'private@example.com' });
    });

    it('deleting needs a supervisor: an agent gets 403, a supervisor deletes', async () => {
      const contact = await create(acme, { name: 'To delete', phone: '+4930901820' });
      const agent = await addAgent(t, acme, 'agent');
      const supervisor = await addAgent(t, acme, 'supervisor');

      const forbidden = await t.http.delete(`/v1/contacts/${contact.id}`).set(agent.auth).expect(403);
      expect(forbidden.body.message).toBe('This action requires the supervisor role');
      expect(await stored(acme, contact.id)).not.toBeNull();
      await t.http.get(`/v1/contacts/${contact.id}`).set(agent.auth).expect(200);
      await t.http.patch(`/v1/contacts/${contact.id}`).set(agent.auth).send({ tags: ['seen'] }).expect(200);

      const deleted = await t.http.delete(`/v1/contacts/${contact.id}`).set(supervisor.auth).expect(200);
      expect(deleted.body).toEqual({ id: contact.id, deleted: true });
      expect(await stored(acme, contact.id)).toBeNull();
      await t.http.get(`/v1/contacts/${contact.id}`).set(acme.auth).expect(404);
      await t.http.delete(`/v1/contacts/${contact.id}`).set(acme.auth).expect(404);
      await t.http.delete('/v1/contacts/not-an-id').set(acme.auth).expect(404);

      const again = await create(acme, { phone: '+49 30 901820' });
      expect(again.id).not.toBe(contact.id);
    });
  });

  describe('list', () => {
    let initech: TestCompany;
    const ids: Record<string, string> = {};

    beforeAll(async () => {
      initech = await registerCompany(t.http, 'Initech');
      const people = [
        { key: 'peter', body: { name: 'Peter Gibbons', email: 'peter@initech.example', phone: '+1 512 555 0101', tags: ['staff', 'tps'] } },
        { key: 'milton', body: { name: 'Milton Waddams', email: 'Milton.W@Basement.example', tags: ['staff', 'stapler'] } },
        { key: 'bob', body: { name: 'Bob Slydell', phone: '+44 20 7946 0958', tags: ['consultant'] } },
        { key: 'regex', body: { name: 'Dot.Star (.*) Inc', tags: ['staff', 'tps', 'stapler'] } },
      ];
      for (const person of people) ids[person.key] = (await create(initech, person.body)).id;
      await create(acme, { name: 'Peter Acme', email: 'peter@acme.example', tags: ['staff', 'tps'] });
    });

    async function search(query: Record<string, string | number>): Promise<string[]> {
      const response = await t.http.get('/v1/contacts').query(query).set(initech.auth).expect(200);
      expect(response.body.nextCursor).toBeNull();
      return response.body.data.map((contact: ContactBody) => contact.id);
    }

    it('lists the company\'s contacts newest first, and only them', async () => {
      const response = await t.http.get('/v1/contacts').set(initech.auth).expect(200);
      expect(response.body).toEqual({ data: expect.any(Array), nextCursor: null });
      expect(response.body.data.map((contact: ContactBody) => contact.id)).toEqual([ids.regex, ids.bob, ids.milton, ids.peter]);
    });

    it.each([
      ['part of a name, any case', 'gibb', ['peter']],
      ['an e-mail in another case', 'milton.w@BASEMENT', ['milton']],
      ['part of an e-mail domain', 'initech.EXAMPLE', ['peter']],
      ['a phone with spaces', '512 555', ['peter']],
      ['a phone with dashes and parentheses', '(512) 555-01', ['peter']],
      ['a phone with "+" and dots', '+44.20.7946', ['bob']],
      ['regular-expression characters, literally', '(.*)', ['regex']],
      ['a dot, literally', 't.s', ['regex']],
      ['nothing', 'nobody-here', []],
    ])('search by %s', async (_, text, expected) => {
      expect(await search({ search: text })).toEqual(expected.map((key) => ids[key]).reverse());
    });

    it('keeps contacts having every listed tag', async () => {
      expect(await search({ tags: 'staff' })).toEqual([ids.regex, ids.milton, ids.peter]);
      expect(await search({ tags: 'staff,tps' })).toEqual([ids.regex, ids.peter]);
      expect(await search({ tags: ' tps , stapler ' })).toEqual([ids.regex]);
      expect(await search({ tags: 'staff,nope' })).toEqual([]);
      const repeated = await t.http.get('/v1/contacts?tags=staff&tags=stapler').set(initech.auth).expect(200);
      expect(repeated.body.data.map((contact: ContactBody) => contact.id)).toEqual([ids.regex, ids.milton]);
      expect(await search({ tags: 'staff', search: 'milton' })).toEqual([ids.milton]);
    });

    it('walks every page with limit and cursor, without repeats or gaps', async () => {
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const response: { body: { data: ContactBody[]; nextCursor: string | null } } = await t.http
          .get('/v1/contacts')
          .query(cursor ? { limit: 3, cursor } : { limit: 3 })
          .set(initech.auth)
          .expect(200);
        expect(response.body.data.length).toBeLessThanOrEqual(3);
        seen.push(...response.body.data.map((contact) => contact.id));
        cursor = response.body.nextCursor;
        pages += 1;
      } while (cursor);
      expect(pages).toBe(2);
      expect(seen).toEqual([ids.regex, ids.bob, ids.milton, ids.peter]);
    });

    it.each([
      ['limit=0'],
      ['limit=101'],
      ['limit=abc'],
      ['cursor=bm90LWEtY3Vyc29y'],
      ['search[$ne]=x'],
      ['search=a&search=b'],
      ['unknown=1'],
      [`search=${'a'.repeat(101)}`],
      [`tags=${'t'.repeat(51)}`],
    ])('400 for ?%s', async (query) => {
      const response = await t.http.get(`/v1/contacts?${query}`).set(initech.auth).expect(400);
      expect(response.body.status).toBe(400);
    });
  });

  describe('ContactIdentities.findOrCreateByIdentity', () => {
    let service: ContactIdentities;
    let umbrella: TestCompany;

    beforeAll(async () => {
      service = t.app.get(ContactIdentities);
      umbrella = await registerCompany(t.http, 'Umbrella');
    });

    it('creates one contact for 20 concurrent calls with a new phone', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, index) =>
          service.findOrCreateByIdentity(umbrella.companyId, {
            phone: index % 2 ? '+1 (650) 253-0000' : '16502530000',
            name: 'Alice',
          }),
        ),
      );
      const ids = new Set(results.map((contact) => contact._id.toHexString()));
      expect(ids.size).toBe(1);
      expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: umbrella.companyId, phone: '+16502530000' })).toBe(1);
      expect(results[0]).toMatchObject({ phone: '+16502530000', name: 'Alice' });
    });

    it('finds by phone first, then by e-mail, filling what is missing', async () => {
      const byEmail = await service.findOrCreateByIdentity(umbrella.companyId, { email: 'Jill@Umbrella.example' });
      expect(byEmail).toMatchObject({ email: 'jill@umbrella.example' });
      expect(byEmail.phone).toBeUndefined();

      const filled = await service.findOrCreateByIdentity(umbrella.companyId, {
        email: 'jill@umbrella.example',
        phone: '+1 212 555 0187',
        name: 'Jill Valentine',
      });
      expect(filled._id).toEqual(byEmail._id);
      expect(filled).toMatchObject({ email: 'jill@umbrella.example', phone: '+12125550187', name: 'Jill Valentine' });

      const byPhone = await service.findOrCreateByIdentity(umbrella.companyId, { phone: '12125550187', name: 'Someone Else' });
      expect(byPhone._id).toEqual(byEmail._id);
      expect(byPhone.name).toBe('Jill Valentine');
    });

    it('does not fill an e-mail another contact holds', async () => {
      await service.findOrCreateByIdentity(umbrella.companyId, { email: 'chris@umbrella.example' });
      const byPhone = await service.findOrCreateByIdentity(umbrella.companyId, { phone: '+1 303 555 0142' });
      const again = await service.findOrCreateByIdentity(umbrella.companyId, {
        phone: '+13035550142',
        email: 'chris@umbrella.example',
      });
      expect(again._id).toEqual(byPhone._id);
      expect(again.email).toBeUndefined();
      expect(await t.model<Contact>(Contact.name).countDocuments({ companyId: umbrella.companyId, email: 'chris@umbrella.example' })).toBe(1);
    });

    it('keeps companies apart', async () => {
      const mine = await service.findOrCreateByIdentity(umbrella.companyId, { email: 'shared@example.com' });
      const theirs = await service.findOrCreateByIdentity(globex.companyId, { email: 'shared@example.com' });
      expect(theirs._id).not.toEqual(mine._id);
      expect(theirs.companyId.toHexString()).toBe(globex.companyId);
      expect(await t.app.get(ContactsService).findById(globex.companyId, mine._id.toHexString())).toBeNull();
      expect(await t.app.get(ContactsService).findById(umbrella.companyId, mine._id.toHexString())).toMatchObject({ email: 'shared@example.com' });
      expect(await t.app.get(ContactsService).findById(umbrella.companyId, 'nope')).toBeNull();
    });

    it('cuts a display name longer than 200 characters instead of refusing it', async () => {
      const contact = await service.findOrCreateByIdentity(umbrella.companyId, { email: 'long@umbrella.example', name: 'N'.repeat(300) });
      expect(contact.name).toBe('N'.repeat(200));
    });

    it('refuses an identity without phone and e-mail, or with a malformed one', async () => {
      await expect(service.findOrCreateByIdentity(umbrella.companyId, { name: 'Nobody' })).rejects.toBeInstanceOf(BadRequestException);
      await expect(service.findOrCreateByIdentity(umbrella.companyId, { phone: '123' })).rejects.toBeInstanceOf(BadRequestException);
      await expect(service.findOrCreateByIdentity(umbrella.companyId, { email: 'nope' })).rejects.toBeInstanceOf(BadRequestException);
    });
  });
});
