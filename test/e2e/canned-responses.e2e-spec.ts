import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { CannedResponse, MAX_CANNED_RESPONSES_PER_COMPANY } from '../../src/canned-responses/canned-response.schema.js';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Message } from '../../src/messages/message.schema.js';
import { EventRecorder } from '../support/event-log.js';
import { addAgent, twoCompanies, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const CONTENT = 'Hi {{contact.name}}, your refund is on its way. {{agent.name}}, {{company.name}}';

describe('/v1/canned-responses', () => {
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
    await t.model(CannedResponse.name).collection.deleteMany({});
    await recorder.clear();
  });
  afterAll(() => t.close());

  const create = (auth: { Authorization: string }, body: Record<string, unknown>) => t.http.post('/v1/canned-responses').set(auth).send(body);
  const stored = (company: TestCompany) => t.model<CannedResponse>(CannedResponse.name).find({ companyId: company.companyId }).lean();

  describe('writing', () => {
    it('creates, reads, updates and deletes a response (supervisor and admin)', async () => {
      const created = await create(supervisor.auth, { shortCode: 'refund-sent', title: 'Refund on its way', content: CONTENT }).expect(201);
      expect(created.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        shortCode: 'refund-sent',
        title: 'Refund on its way',
        content: CONTENT,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const path = `/v1/canned-responses/${created.body.id}`;
      expect((await t.http.get(path).set(agent.auth).expect(200)).body).toEqual(created.body);

      const patched = await t.http.patch(path).set(acme.auth).send({ title: 'Refund sent' }).expect(200);
      expect(patched.body).toMatchObject({ shortCode: 'refund-sent', title: 'Refund sent', content: CONTENT });
      expect(await stored(acme)).toEqual([expect.objectContaining({ shortCode: 'refund-sent', title: 'Refund sent', content: CONTENT })]);

      expect((await t.http.delete(path).set(supervisor.auth).expect(200)).body).toEqual({ id: created.body.id, deleted: true });
      await t.http.get(path).set(acme.auth).expect(404);
      await t.http.delete(path).set(acme.auth).expect(404);
      expect(await stored(acme)).toEqual([]);
    });

    it('lets agents read but not write (403), and writes nothing', async () => {
      const created = await create(acme.auth, { shortCode: 'hello', title: 'Hello', content: 'Hello!' }).expect(201);
      await create(agent.auth, { shortCode: 'mine', title: 'Mine', content: 'Mine' }).expect(403);
      await t.http.patch(`/v1/canned-responses/${created.body.id}`).set(agent.auth).send({ title: 'Changed' }).expect(403);
      await t.http.delete(`/v1/canned-responses/${created.body.id}`).set(agent.auth).expect(403);
      expect((await t.http.get('/v1/canned-responses').set(agent.auth).expect(200)).body.data).toHaveLength(1);
      expect(await stored(acme)).toEqual([expect.objectContaining({ shortCode: 'hello', title: 'Hello' })]);
    });

    it('keeps shortCode unique per company (409 on create and on update), not across companies', async () => {
      await create(acme.auth, { shortCode: 'greet', title: 'Greeting', content: 'Hi!' }).expect(201);
      const duplicate = await create(acme.auth, { shortCode: 'greet', title: 'Other', content: 'Hello!' }).expect(409);
      expect(duplicate.body.detail).toBe('A canned response with shortCode "greet" already exists in your company');
      const other = await create(acme.auth, { shortCode: 'other', title: 'Other', content: 'Hello!' }).expect(201);
      await t.http.patch(`/v1/canned-responses/${other.body.id}`).set(acme.auth).send({ shortCode: 'greet' }).expect(409);
      await create(globex.auth, { shortCode: 'greet', title: 'Globex greeting', content: 'Hey' }).expect(201);
      expect((await stored(acme)).map((response) => response.shortCode).sort()).toEqual(['greet', 'other']);
    });

    it.each([
      ['an unknown placeholder', { content: 'Hi {{contact.nickname}}' }, 'content', 'unknown placeholder {{contact.nickname}}'],
      ['a placeholder never closed', { content: 'Hi {{contact.name' }, 'content', 'never closed'],
      ['an empty content', { content: '' }, 'content', 'content must not be empty'],
      ['a content too long', { content: 'x'.repeat(4097) }, 'content', 'content must be shorter than or equal to 4096 characters'],
      ['an upper-case shortCode', { shortCode: 'Refund' }, 'shortCode', 'shortCode must be 1 to 50 of lower-case letters, digits, "_" and "-"'],
      ['a shortCode with spaces', { shortCode: 'a b' }, 'shortCode', 'shortCode must be 1 to 50'],
      ['a shortCode too long', { shortCode: 'a'.repeat(51) }, 'shortCode', 'shortCode must be 1 to 50'],
      ['a missing title', { title: undefined }, 'title', 'title must be'],
      ['an unknown field', { color: 'red' }, 'color', 'color is not a field of this body'],
    ])('refuses %s on create with a 400 naming the field, storing nothing', async (_, change, field, message) => {
      const response = await create(acme.auth, { shortCode: 'ok', title: 'Ok', content: 'Ok', ...change }).expect(400);
      expect(response.body.errors).toEqual(expect.arrayContaining([{ field, message: expect.stringContaining(message) }]));
      expect(await stored(acme)).toEqual([]);
    });

    it('checks placeholders on update too, and refuses null', async () => {
      const created = await create(acme.auth, { shortCode: 'ok', title: 'Ok', content: 'Ok' }).expect(201);
      const path = `/v1/canned-responses/${created.body.id}`;
      const unknown = await t.http.patch(path).set(acme.auth).send({ content: 'Dear {{customer}}' }).expect(400);
      expect(unknown.body.errors).toEqual([{ field: 'content', message: expect.stringContaining('unknown placeholder {{customer}}') }]);
      await t.http.patch(path).set(acme.auth).send({ title: null }).expect(400);
      expect(await stored(acme)).toEqual([expect.objectContaining({ content: 'Ok', title: 'Ok' })]);
    });

    it("answers 404 for another company's response, and changes nothing there", async () => {
      const foreign = await create(globex.auth, { shortCode: 'theirs', title: 'Theirs', content: 'Theirs' }).expect(201);
      const path = `/v1/canned-responses/${foreign.body.id}`;
      await t.http.get(path).set(acme.auth).expect(404);
      await t.http.patch(path).set(acme.auth).send({ title: 'Mine now' }).expect(404);
      await t.http.delete(path).set(acme.auth).expect(404);
      await t.http.get('/v1/canned-responses/not-an-id').set(acme.auth).expect(404);
      expect(await stored(globex)).toEqual([expect.objectContaining({ title: 'Theirs' })]);
      expect((await t.http.get('/v1/canned-responses').set(acme.auth).expect(200)).body.data).toEqual([]);
    });

    it(`holds at most ${MAX_CANNED_RESPONSES_PER_COMPANY} per company (400 past that)`, async () => {
      const now = new Date();
      await t.model(CannedResponse.name).collection.insertMany(
        Array.from({ length: MAX_CANNED_RESPONSES_PER_COMPANY - 1 }, (_, index) => ({
          _id: new Types.ObjectId(),
          companyId: new Types.ObjectId(acme.companyId),
          shortCode: `c${index}`,
          title: `T${index}`,
          content: 'x',
          createdAt: now,
          updatedAt: now,
        })),
      );
      await create(acme.auth, { shortCode: 'last', title: 'Last', content: 'x' }).expect(201);
      const refused = await create(acme.auth, { shortCode: 'one-more', title: 'One more', content: 'x' }).expect(400);
      expect(refused.body.detail).toBe(`A company can have at most ${MAX_CANNED_RESPONSES_PER_COMPANY} canned responses; delete one first`);
      await create(globex.auth, { shortCode: 'one-more', title: 'One more', content: 'x' }).expect(201);
      expect(await t.model(CannedResponse.name).countDocuments({ companyId: acme.companyId })).toBe(MAX_CANNED_RESPONSES_PER_COMPANY);
    });
  });

  describe('listing and search', () => {
    beforeEach(async () => {
      for (const [shortCode, title, content] of [
        ['refund-sent', 'Refund on its way', 'Your refund is on its way.'],
        ['refund-denied', 'Refund refused', 'We cannot refund this order.'],
        ['shipping', 'Where is my parcel', 'Your parcel ships today.'],
        ['greet', 'Greeting', 'Hello {{contact.name}}!'],
        ['bye', 'Goodbye', 'Thanks for the REFUND request.'],
      ]) {
        await create(acme.auth, { shortCode, title, content }).expect(201);
      }
      await create(globex.auth, { shortCode: 'refund-globex', title: 'Refund', content: 'refund' }).expect(201);
    });

    const codes = async (query: string) =>
      (await t.http.get(`/v1/canned-responses${query}`).set(agent.auth).expect(200)).body.data.map((response: { shortCode: string }) => response.shortCode);

    it('lists the company’s responses by shortCode', async () => {
      expect(await codes('')).toEqual(['bye', 'greet', 'refund-denied', 'refund-sent', 'shipping']);
    });

    it('matches the start of shortCode, or anywhere in title or content, case-insensitively', async () => {
      expect(await codes('?search=refund')).toEqual(['bye', 'refund-denied', 'refund-sent']);
      expect(await codes('?search=REFUND-D')).toEqual(['refund-denied']);
      expect(await codes('?search=shipp')).toEqual(['shipping']);
      expect(await codes('?search=ipping')).toEqual([]);
      expect(await codes('?search=und-s')).toEqual([]);
      expect(await codes('?search=PARCEL')).toEqual(['shipping']);
      expect(await codes('?search=good')).toEqual(['bye']);
      expect(await codes('?search={{contact')).toEqual(['greet']);
      expect(await codes('?search=.*')).toEqual([]);
    });

    it('pages by shortCode with a cursor, search included, never repeating or skipping', async () => {
      const first = await t.http.get('/v1/canned-responses?limit=2').set(agent.auth).expect(200);
      expect(first.body.data.map((response: { shortCode: string }) => response.shortCode)).toEqual(['bye', 'greet']);
      const second = await t.http.get(`/v1/canned-responses?limit=2&cursor=${first.body.nextCursor}`).set(agent.auth).expect(200);
      expect(second.body.data.map((response: { shortCode: string }) => response.shortCode)).toEqual(['refund-denied', 'refund-sent']);
      const third = await t.http.get(`/v1/canned-responses?limit=2&cursor=${second.body.nextCursor}`).set(agent.auth).expect(200);
      expect(third.body).toEqual({ data: [expect.objectContaining({ shortCode: 'shipping' })], nextCursor: null });
      const searched = await t.http.get('/v1/canned-responses?search=refund&limit=1').set(agent.auth).expect(200);
      const next = await t.http.get(`/v1/canned-responses?search=refund&limit=5&cursor=${searched.body.nextCursor}`).set(agent.auth).expect(200);
      expect(next.body.data.map((response: { shortCode: string }) => response.shortCode)).toEqual(['refund-denied', 'refund-sent']);
    });

    it('refuses a bad search, limit or cursor with a 400', async () => {
      await t.http.get('/v1/canned-responses?search=').set(agent.auth).expect(400);
      await t.http.get(`/v1/canned-responses?search=${'x'.repeat(101)}`).set(agent.auth).expect(400);
      await t.http.get('/v1/canned-responses?limit=0').set(agent.auth).expect(400);
      await t.http.get('/v1/canned-responses?cursor=bm9wZQ').set(agent.auth).expect(400);
      await t.http.get('/v1/canned-responses?search[$gt]=a').set(agent.auth).expect(400);
    });
  });

  describe('sending: POST /v1/conversations/:id/messages { cannedResponseId }', () => {
    async function conversationWith(company: TestCompany, identity: { name?: string; phone?: string; email?: string }): Promise<string> {
      const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact'), ...identity });
      const response = await t.http.post('/v1/conversations').set(company.auth).send({ contactId: contact._id.toHexString() }).expect(201);
      await recorder.clear();
      return response.body.id;
    }

    it('renders the placeholders for the conversation and sends the text as the agent, with message.sent', async () => {
      const response = await create(acme.auth, { shortCode: 'all', title: 'All', content: '{{contact.name}} {{contact.phone}} {{contact.email}} / {{agent.name}} / {{company.name}}' }).expect(201);
      const id = await conversationWith(acme, { name: 'Grace Hopper', phone: '+14155552671', email: 'grace@example.com' });
      const sent = await t.http.post(`/v1/conversations/${id}/messages`).set(agent.auth).send({ cannedResponseId: response.body.id }).expect(201);
      expect(sent.body).toMatchObject({
        direction: 'outbound',
        type: 'text',
        text: 'Grace Hopper +14155552671 grace@example.com / A agent / Acme',
        senderType: 'agent',
        senderId: agent.agentId,
        private: false,
        delivery: { status: 'pending' },
      });
      const events = await recorder.events();
      expect(events.map((event) => event.type)).toEqual(['message.sent']);
      expect(events[0].data).toMatchObject({ message: { id: sent.body.id, text: sent.body.text } });
      const conversation = await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200);
      expect(conversation.body.firstResponseAt).toBe(sent.body.createdAt);
    });

    it('renders a missing value as empty', async () => {
      const response = await create(acme.auth, { shortCode: 'call', title: 'Call', content: 'Hi {{contact.name}}, we will call {{contact.phone}}.' }).expect(201);
      const id = await conversationWith(acme, {});
      const sent = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ cannedResponseId: response.body.id }).expect(201);
      expect(sent.body.text).toBe('Hi , we will call .');
    });

    it("refuses another company's response (400 naming cannedResponseId), a foreign conversation (404), and two modes at once", async () => {
      const theirs = await create(globex.auth, { shortCode: 'theirs', title: 'Theirs', content: 'Theirs' }).expect(201);
      const ours = await create(acme.auth, { shortCode: 'ours', title: 'Ours', content: 'Ours' }).expect(201);
      const id = await conversationWith(acme, { name: 'Grace' });
      const foreign = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ cannedResponseId: theirs.body.id }).expect(400);
      expect(foreign.body.errors).toEqual([{ field: 'cannedResponseId', message: 'cannedResponseId is not a canned response of your company' }]);
      const malformed = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ cannedResponseId: 'nope' }).expect(400);
      expect(malformed.body.errors[0].field).toBe('cannedResponseId');
      const both = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'Hi', cannedResponseId: ours.body.id }).expect(400);
      expect(both.body.errors).toEqual(
        ['text', 'cannedResponseId'].map((field) => ({ field, message: 'exactly one of text, cannedResponseId, template is required, not text and cannedResponseId together' })),
      );
      const asNote = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ cannedResponseId: ours.body.id, private: true }).expect(400);
      expect(asNote.body.errors).toEqual([{ field: 'private', message: 'private goes only with text' }]);
      // Checked before conversationWith clears the recorder.
      expect(await recorder.events()).toEqual([]);
      const globexConversation = await conversationWith(globex, {});
      await t.http.post(`/v1/conversations/${globexConversation}/messages`).set(acme.auth).send({ cannedResponseId: ours.body.id }).expect(404);
      expect(await t.model<Message>(Message.name).collection.countDocuments({ conversationId: { $in: [new Types.ObjectId(id), new Types.ObjectId(globexConversation)] } })).toBe(0);
      expect(await recorder.events()).toEqual([]);
    });

    it('refuses a closed conversation with a 400, like a text', async () => {
      const response = await create(acme.auth, { shortCode: 'late', title: 'Late', content: 'Too late' }).expect(201);
      const id = await conversationWith(acme, {});
      await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}).expect(200);
      const refused = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ cannedResponseId: response.body.id }).expect(400);
      expect(refused.body.detail).toBe(`Conversation ${id} is closed; messages cannot be added to it`);
    });
  });
});
