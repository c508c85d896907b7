import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { ContactMerge } from '../../src/contact-merges/contact-merge.schema.js';
import { Contact } from '../../src/contacts/contact.schema.js';
import type { ContactView } from '../../src/contacts/contact.view.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { ConversationView } from '../../src/conversations/conversation.view.js';
import { addAgent, defineAttributes, uniqueEmail } from '../support/factories.js';
import { companyWithKey, inbound, loggedOf, type ServiceLevelsCompany } from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';

let phoneCounter = 4155550100;
const newPhone = () => `+1${phoneCounter++}`;

/** Contact merge and identity (contract section 22). */
describe('contact merge', () => {
  const clock = new TestClock();
  let t: TestApp;
  let acme: ServiceLevelsCompany;
  let globex: ServiceLevelsCompany;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    [acme, globex] = await Promise.all([companyWithKey(t, 'Acme'), companyWithKey(t, 'Globex')]);
    await defineAttributes(t.http, acme, 'contact', { plan: 'text', region: 'text', seats: 'number', lang: 'text' });
  });
  afterAll(() => t.close());

  async function contact(body: object, company = acme): Promise<ContactView> {
    return (await t.http.post('/v1/contacts').set(company.auth).send(body).expect(201)).body;
  }

  async function merge(targetId: string, sourceIds: string[], company = acme): Promise<{ mergeId: string; contact: ContactView }> {
    return (await t.http.post('/v1/contacts/merge').set(company.auth).send({ targetId, sourceIds }).expect(200)).body;
  }

  async function storedContacts(company = acme): Promise<Contact[]> {
    return t.model<Contact>(Contact.name).find({ companyId: company.companyId }).sort({ _id: 1 }).lean();
  }

  async function conversationOf(id: string): Promise<ConversationView> {
    return (await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200)).body;
  }

  describe('merge', () => {
    it('keeps the target, fills its empty fields from the sources in order, unites tags, and moves conversations', async () => {
      const target = await contact({ name: 'Ada Lovelace', tags: ['vip'], attributes: { plan: 'pro', region: 'eu' } });
      const phone1 = newPhone();
      const email1 = uniqueEmail('ada');
      const first = await contact({ name: 'Ada L.', email: email1, phone: phone1, tags: ['beta', 'vip'], attributes: { plan: 'free', seats: 3 } });
      const second = await contact({ email: uniqueEmail('ada2'), phone: newPhone(), tags: ['late'], attributes: { seats: 9, lang: 'en' } });
      const chat = await inbound(t, acme, 'Where is my order?', { phone: phone1 }, 'whatsapp');
      await t.http.post(`/v1/conversations/${chat.conversation.id}/messages`).set(acme.auth).send({ text: 'Call her', private: true }).expect(201);

      const merged = await merge(target.id, [first.id, second.id]);

      expect(merged.mergeId).toMatch(/^[0-9a-f]{24}$/);
      expect(merged.contact).toMatchObject({
        id: target.id,
        name: 'Ada Lovelace',
        email: email1,
        phone: phone1,
        tags: ['vip', 'beta', 'late'],
        attributes: { plan: 'pro', region: 'eu', seats: 3, lang: 'en' },
      });
      const moved = await conversationOf(chat.conversation.id);
      expect(moved).toMatchObject({
        contactId: target.id,
        originalContactId: first.id,
        contact: { id: target.id, name: 'Ada Lovelace', phone: phone1 },
      });
      const messages = (await t.http.get(`/v1/conversations/${chat.conversation.id}/messages`).set(acme.auth).expect(200)).body.data;
      expect(messages.map((message: { text: string }) => message.text)).toEqual(expect.arrayContaining(['Where is my order?', 'Call her']));
      const listed = (await t.http.get(`/v1/conversations?contactId=${target.id}`).set(acme.auth).expect(200)).body.data;
      expect(listed.map((conversation: ConversationView) => conversation.id)).toContain(chat.conversation.id);

      const [event] = (await loggedOf(t, acme, 'contact.merged')).filter((logged) => (logged.data as { mergeId: string }).mergeId === merged.mergeId);
      expect(event.data).toEqual({
        contact: expect.objectContaining({ id: target.id, email: email1 }),
        sourceIds: [first.id, second.id],
        mergeId: merged.mergeId,
      });
      const record = await t.model<ContactMerge>(ContactMerge.name).findOne({ _id: merged.mergeId, companyId: acme.companyId }).lean();
      expect(record).toMatchObject({ status: 'done' });
      // No lock is left behind.
      expect((await storedContacts()).filter((stored) => stored.mergeLock)).toEqual([]);
    });

    it('answers 410 with mergedInto and the canonical Link for a merged source; lists and search leave it out', async () => {
      const target = await contact({ name: 'Tomb Target', email: uniqueEmail('tt') });
      const source = await contact({ name: 'Tomb Source', phone: newPhone() });
      await merge(target.id, [source.id]);

      for (const call of [
        t.http.get(`/v1/contacts/${source.id}`),
        t.http.patch(`/v1/contacts/${source.id}`).send({ name: 'Back' }),
        t.http.delete(`/v1/contacts/${source.id}`),
      ]) {
        const response = await call.set(acme.auth).expect(410);
        expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
        expect(response.headers.link).toBe(`</v1/contacts/${target.id}>; rel="canonical"`);
        expect(response.body).toMatchObject({ status: 410, mergedInto: target.id, type: 'urn:parley:problem:contact-merged' });
      }
      const stored = await t.model<Contact>(Contact.name).findOne({ _id: source.id, companyId: acme.companyId }).lean();
      expect(stored).toMatchObject({ name: 'Tomb Source', mergedInto: new Types.ObjectId(target.id) });
      const listed = (await t.http.get('/v1/contacts?limit=100').set(acme.auth).expect(200)).body.data.map((row: ContactView) => row.id);
      expect(listed).toContain(target.id);
      expect(listed).not.toContain(source.id);
      const searched = (await t.http.get('/v1/contacts?search=Tomb').set(acme.auth).expect(200)).body.data.map((row: ContactView) => row.id);
      expect(searched).toEqual([target.id]);
    });

    it("routes a merged source's phone and e-mail to the target; creating a contact with them is 409 naming it", async () => {
      const targetPhone = newPhone();
      const target = await contact({ name: 'Route Target', phone: targetPhone, email: uniqueEmail('route') });
      const sourcePhone = newPhone();
      const sourceEmail = uniqueEmail('route-source');
      const source = await contact({ phone: sourcePhone, email: sourceEmail });
      const open = await inbound(t, acme, 'Hello from my usual number', { phone: targetPhone }, 'whatsapp');
      await merge(target.id, [source.id]);
      const before = (await storedContacts()).length;

      const onWhatsapp = await inbound(t, acme, 'Hello from my other number', { phone: sourcePhone }, 'whatsapp');
      expect(onWhatsapp.conversation).toMatchObject({ id: open.conversation.id, contactId: target.id });
      const byEmail = await inbound(t, acme, 'And by mail', { email: sourceEmail }, 'email');
      expect(byEmail.conversation).toMatchObject({ contactId: target.id, channel: 'email' });
      expect((await storedContacts()).length).toBe(before);

      for (const body of [{ phone: sourcePhone }, { email: sourceEmail.toUpperCase() }]) {
        const refused = await t.http
          .post('/v1/contacts')
          .set(acme.auth)
          .send({ name: 'Copycat', ...body })
          .expect(409);
        expect(refused.body.message).toContain(target.id);
      }
      expect((await storedContacts()).length).toBe(before);
    });

    it('closes a source conversation open where the target has one open, and moves it with its history', async () => {
      const targetPhone = newPhone();
      const sourcePhone = newPhone();
      const target = await contact({ phone: targetPhone });
      const source = await contact({ phone: sourcePhone });
      const kept = await inbound(t, acme, 'Target writes', { phone: targetPhone }, 'whatsapp');
      const clashing = await inbound(t, acme, 'Source writes', { phone: sourcePhone }, 'whatsapp');
      await merge(target.id, [source.id]);

      expect(await conversationOf(kept.conversation.id)).toMatchObject({
        contactId: target.id,
        status: kept.conversation.status,
        originalContactId: null,
      });
      expect(await conversationOf(clashing.conversation.id)).toMatchObject({ contactId: target.id, status: 'closed', originalContactId: source.id });
      const open = await t
        .model<Conversation>(Conversation.name)
        .countDocuments({ companyId: acme.companyId, contactId: target.id, channel: 'whatsapp', isOpen: true });
      expect(open).toBe(1);
    });

    it('refuses a plain agent (403) and bad input (400 naming the field) with nothing changed', async () => {
      const target = await contact({ name: 'Bad Input Target' });
      const source = await contact({ name: 'Bad Input Source' });
      const agent = await addAgent(t, acme, 'agent');
      const before = await storedContacts();
      await t.http
        .post('/v1/contacts/merge')
        .set(agent.auth)
        .send({ targetId: target.id, sourceIds: [source.id] })
        .expect(403);
      const ids = Array.from({ length: 11 }, () => new Types.ObjectId().toHexString());
      const cases: [object, string][] = [
        [{ targetId: target.id, sourceIds: [target.id] }, 'sourceIds'],
        [{ targetId: target.id, sourceIds: [source.id, source.id] }, 'sourceIds'],
        [{ targetId: target.id, sourceIds: ids }, 'sourceIds'],
        [{ targetId: target.id, sourceIds: [] }, 'sourceIds'],
        [{ targetId: 'nope', sourceIds: [source.id] }, 'targetId'],
        [{ targetId: target.id, sourceIds: ['nope'] }, 'sourceIds'],
        [{ sourceIds: [source.id] }, 'targetId'],
      ];
      for (const [body, field] of cases) {
        const response = await t.http.post('/v1/contacts/merge').set(acme.auth).send(body).expect(400);
        expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
      }
      expect(await storedContacts()).toEqual(before);
      expect(await t.model<ContactMerge>(ContactMerge.name).countDocuments({ companyId: acme.companyId, targetId: target.id })).toBe(0);
    });

    it("answers 404 for another company's contact and 410 for a merged one, as source or target, changing nothing", async () => {
      const target = await contact({ name: 'Tenancy Target' });
      const source = await contact({ name: 'Tenancy Source' });
      const foreign = await contact({ name: 'Globex Person' }, globex);
      const gone = await contact({ name: 'Gone' });
      const survivor = await contact({ name: 'Survivor' });
      await merge(survivor.id, [gone.id]);
      const before = await storedContacts();

      await t.http
        .post('/v1/contacts/merge')
        .set(acme.auth)
        .send({ targetId: target.id, sourceIds: [foreign.id] })
        .expect(404);
      await t.http
        .post('/v1/contacts/merge')
        .set(acme.auth)
        .send({ targetId: foreign.id, sourceIds: [source.id] })
        .expect(404);
      const asSource = await t.http
        .post('/v1/contacts/merge')
        .set(acme.auth)
        .send({ targetId: target.id, sourceIds: [source.id, gone.id] })
        .expect(410);
      expect(asSource.body.mergedInto).toBe(survivor.id);
      await t.http
        .post('/v1/contacts/merge')
        .set(acme.auth)
        .send({ targetId: gone.id, sourceIds: [source.id] })
        .expect(410);
      expect(await storedContacts()).toEqual(before);
      expect(await storedContacts(globex)).toEqual([expect.objectContaining({ name: 'Globex Person' })]);
    });

    it('answers 409 to a second merge of a contact while one is under way, and concurrent merges never interleave', async () => {
      const target = await contact({ name: 'Locked Target' });
      const source = await contact({ name: 'Locked Source' });
      const contacts = t.model<Contact>(Contact.name);
      await contacts.updateOne({ _id: source.id, companyId: acme.companyId }, { $set: { mergeLock: new Types.ObjectId() } });
      await t.http
        .post('/v1/contacts/merge')
        .set(acme.auth)
        .send({ targetId: target.id, sourceIds: [source.id] })
        .expect(409);
      expect(await contacts.findOne({ _id: source.id, companyId: acme.companyId }).lean()).not.toHaveProperty('mergedInto');
      await contacts.updateOne({ _id: source.id, companyId: acme.companyId }, { $unset: { mergeLock: 1 } });

      const shared = await contact({ name: 'Shared', phone: newPhone() });
      const [a, b] = [await contact({ name: 'A' }), await contact({ name: 'B' })];
      const answers = await Promise.all([
        t.http
          .post('/v1/contacts/merge')
          .set(acme.auth)
          .send({ targetId: a.id, sourceIds: [shared.id] }),
        t.http
          .post('/v1/contacts/merge')
          .set(acme.auth)
          .send({ targetId: b.id, sourceIds: [shared.id] }),
      ]);
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses[0]).toBe(200);
      expect([409, 410]).toContain(statuses[1]);
      const winner = answers.find((answer) => answer.status === 200)!.body.contact.id;
      expect(await contacts.findOne({ _id: shared.id, companyId: acme.companyId }).lean()).toMatchObject({ mergedInto: new Types.ObjectId(winner) });
      expect(
        await t.model<ContactMerge>(ContactMerge.name).countDocuments({ companyId: acme.companyId, sourceIds: new Types.ObjectId(shared.id) }),
      ).toBe(1);
      expect((await storedContacts()).filter((stored) => stored.mergeLock)).toEqual([]);
    });
  });

  describe('undo', () => {
    it('gives each source back its values and conversations; filled fields empty again; new conversations stay', async () => {
      const target = await contact({ name: 'Undo Target', tags: ['vip'], attributes: { plan: 'pro' } });
      const sourcePhone = newPhone();
      const sourceEmail = uniqueEmail('undo');
      const source = await contact({ name: 'Undo Source', phone: sourcePhone, email: sourceEmail, tags: ['beta'], attributes: { seats: 2 } });
      const own = await inbound(t, acme, 'Before the merge', { phone: sourcePhone }, 'whatsapp');
      const { mergeId } = await merge(target.id, [source.id]);
      const since = await inbound(t, acme, 'After the merge', { email: sourceEmail }, 'email');
      expect(since.conversation.contactId).toBe(target.id);

      const undone = (await t.http.post(`/v1/contacts/merges/${mergeId}/undo`).set(acme.auth).expect(200)).body;

      expect(undone.contact).toMatchObject({
        id: target.id,
        name: 'Undo Target',
        email: null,
        phone: null,
        tags: ['vip'],
        attributes: { plan: 'pro' },
      });
      expect(undone.sources).toEqual([
        expect.objectContaining({
          id: source.id,
          name: 'Undo Source',
          phone: sourcePhone,
          email: sourceEmail,
          tags: ['beta'],
          attributes: { seats: 2 },
        }),
      ]);
      await t.http.get(`/v1/contacts/${source.id}`).set(acme.auth).expect(200);
      expect(await conversationOf(own.conversation.id)).toMatchObject({
        contactId: source.id,
        originalContactId: null,
        contact: { id: source.id, phone: sourcePhone },
      });
      expect(await conversationOf(since.conversation.id)).toMatchObject({ contactId: target.id });
      const [event] = (await loggedOf(t, acme, 'contact.merge_undone')).filter((logged) => (logged.data as { mergeId: string }).mergeId === mergeId);
      expect(event.data).toEqual({ mergeId, contact: expect.objectContaining({ id: target.id, phone: null }), sourceIds: [source.id] });
      // The source is itself again: its phone finds it, and a new contact with it is the usual 409.
      expect((await inbound(t, acme, 'Me again', { phone: sourcePhone }, 'whatsapp')).conversation.id).toBe(own.conversation.id);
      await t.http.post(`/v1/contacts/merges/${mergeId}/undo`).set(acme.auth).expect(409);
      expect((await storedContacts()).filter((stored) => stored.mergeLock)).toEqual([]);
    });

    it("answers 409 after CONTACT_MERGE_UNDO_DAYS, when a source's phone went to another contact, or for a re-merged target", async () => {
      const late = await merge((await contact({ name: 'Late T' })).id, [(await contact({ name: 'Late S' })).id]);
      const taken = await contact({ name: 'Taken T', phone: newPhone() });
      const takenPhone = newPhone();
      const takenSource = await contact({ name: 'Taken S', phone: takenPhone });
      const takenMerge = await merge(taken.id, [takenSource.id]);
      const other = await contact({ name: 'Other' });
      await t.http.patch(`/v1/contacts/${other.id}`).set(acme.auth).send({ phone: takenPhone }).expect(200);
      const remerged = await contact({ name: 'Remerged T' });
      const remergedMerge = await merge(remerged.id, [(await contact({ name: 'Remerged S' })).id]);
      await merge((await contact({ name: 'Final' })).id, [remerged.id]);

      const phoneTaken = await t.http.post(`/v1/contacts/merges/${takenMerge.mergeId}/undo`).set(acme.auth).expect(409);
      expect(phoneTaken.body.message).toContain(other.id);
      await t.http.post(`/v1/contacts/merges/${remergedMerge.mergeId}/undo`).set(acme.auth).expect(409);
      clock.advance(30 * 86_400_000 + 60_000);
      const tooLate = await t.http.post(`/v1/contacts/merges/${late.mergeId}/undo`).set(acme.auth).expect(409);
      expect(tooLate.body.message).toContain('CONTACT_MERGE_UNDO_DAYS');
      await t.http.post(`/v1/contacts/merges/${new Types.ObjectId().toHexString()}/undo`).set(acme.auth).expect(404);
      await t.http.post(`/v1/contacts/merges/${late.mergeId}/undo`).set(globex.auth).expect(404);
      const agent = await addAgent(t, acme, 'agent');
      await t.http.post(`/v1/contacts/merges/${late.mergeId}/undo`).set(agent.auth).expect(403);
      expect(await t.model<ContactMerge>(ContactMerge.name).findOne({ _id: late.mergeId, companyId: acme.companyId }).lean()).toMatchObject({
        status: 'done',
      });
    });
  });

  describe('duplicates', () => {
    it('groups names equal ignoring case, accents and spaces whose phones and e-mails do not conflict, page by page', async () => {
      const company = await companyWithKey(t, 'Dupes');
      const make = (body: object) => contact(body, company);
      const jose1 = await make({ name: 'José María', email: 'jose@example.com' });
      const jose2 = await make({ name: 'jose maria', phone: newPhone() });
      await make({ name: 'JOSE MARIA', email: 'other@example.com' });
      const zoe1 = await make({ name: 'Zoë' });
      const zoe2 = await make({ name: 'zoe', email: 'zoe@example.com' });
      await make({ name: 'Alone' });
      const gone = await make({ name: 'Zoe' });
      await merge(zoe1.id, [gone.id], company);

      const first = (await t.http.get('/v1/contacts/duplicates?limit=1').set(company.auth).expect(200)).body;
      expect(first.data).toEqual([
        { contacts: [expect.objectContaining({ id: jose1.id }), expect.objectContaining({ id: jose2.id })], reason: 'same_name' },
      ]);
      expect(first.nextCursor).toEqual(expect.any(String));
      const second = (await t.http.get(`/v1/contacts/duplicates?limit=1&cursor=${first.nextCursor}`).set(company.auth).expect(200)).body;
      expect(second.data).toEqual([
        { contacts: [expect.objectContaining({ id: zoe1.id }), expect.objectContaining({ id: zoe2.id })], reason: 'same_name' },
      ]);
      const last = (await t.http.get(`/v1/contacts/duplicates?limit=1&cursor=${second.nextCursor}`).set(company.auth).expect(200)).body;
      expect(last).toEqual({ data: [], nextCursor: null });
      const bad = await t.http.get('/v1/contacts/duplicates?cursor=%21%21').set(company.auth).expect(400);
      expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'cursor' })]);
      expect((await t.http.get('/v1/contacts/duplicates').set(globex.auth).expect(200)).body.data).toEqual([]);
    });

    it('reads duplicates on the name-key index', async () => {
      const plan = await t
        .model<Contact>(Contact.name)
        .find({ companyId: acme.companyId, nameKey: { $gt: 'a', $type: 'string' } })
        .sort({ nameKey: 1, _id: 1 })
        .explain();
      expect(JSON.stringify(plan)).toContain('nameKey_1__id_1');
    });
  });
});
