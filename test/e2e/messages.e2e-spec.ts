import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { BadRequestException } from '@nestjs/common';
import { Types } from 'mongoose';
import type { AgentPrincipal } from '../../src/auth/auth-principal.js';
import { RequestValidationException } from '../../src/common/errors/request-validation.exception.js';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { MessagesService } from '../../src/messages/messages.service.js';
import { twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { asSnapshot } from '../support/conversations.js';
import { EventRecorder, loggedEvent } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface MessageBody {
  id: string;
  conversationId: string;
  direction: string;
  type: string;
  text: string | null;
  createdAt: string;
}

interface PageBody {
  data: MessageBody[];
  nextCursor: string | null;
}

describe('/v1/conversations/:id/messages', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  async function startConversation(company: TestCompany): Promise<string> {
    const contact = await t.app
      .get(ContactIdentities)
      .findOrCreateByIdentity(company.companyId, { email: uniqueEmail('contact') });
    const response = await t.http
      .post('/v1/conversations')
      .set(company.auth)
      .send({ contactId: contact._id.toHexString() })
      .expect(201);
    await recorder.clear();
    return response.body.id as string;
  }

  const storedConversation = (company: TestCompany, id: string) =>
    t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
  const storedMessages = (company: TestCompany, conversationId: string) =>
    t.model<Message>(Message.name).find({ conversationId, companyId: company.companyId }).lean();

  /** Stores inbound messages at given times, straight into the collection: the API stamps the current time. */
  async function seed(company: TestCompany, conversationId: string, times: string[]): Promise<string[]> {
    const ids = times.map(() => new Types.ObjectId());
    await t.model<Message>(Message.name).collection.insertMany(
      times.map((time, index) => ({
        _id: ids[index],
        companyId: new Types.ObjectId(company.companyId),
        conversationId: new Types.ObjectId(conversationId),
        direction: 'inbound',
        type: 'text',
        text: `message ${index}`,
        caption: null,
        media: null,
        senderType: 'contact',
        senderId: null,
        createdAt: new Date(time),
        updatedAt: new Date(time),
      })),
    );
    return ids.map((id) => id.toHexString());
  }

  const agentOf = (company: TestCompany): AgentPrincipal => ({
    kind: 'agent',
    agentId: company.agentId,
    companyId: company.companyId,
    role: 'admin',
  });

  describe('POST', () => {
    it('sends an outbound text message from the agent and emits message.sent with both snapshots', async () => {
      const id = await startConversation(acme);
      const response = await t.http
        .post(`/v1/conversations/${id}/messages`)
        .set(acme.auth)
        .send({ text: 'Your refund is on its way.' })
        .expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        conversationId: id,
        direction: 'outbound',
        type: 'text',
        text: 'Your refund is on its way.',
        caption: null,
        media: null,
        template: null,
        senderType: 'agent',
        senderId: acme.agentId,
        externalId: null,
        delivery: { status: 'pending', updatedAt: expect.any(String) },
        private: false,
        mentions: [],
        createdAt: expect.any(String),
      });
      expect(response.body.delivery.updatedAt).toBe(response.body.createdAt);
      const conversation = await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200);
      expect(conversation.body).toMatchObject({
        lastMessageAt: response.body.createdAt,
        firstResponseAt: response.body.createdAt,
        status: 'bot',
      });
      expect(await recorder.events()).toEqual([
        loggedEvent('message.sent', acme.companyId, expect.any(Date), { message: response.body, conversation: asSnapshot(conversation.body) }),
      ]);
      const [stored] = await storedMessages(acme, id);
      expect(stored).toMatchObject({ direction: 'outbound', senderType: 'agent', text: 'Your refund is on its way.' });
      expect(stored.senderId?.toHexString()).toBe(acme.agentId);
    });

    it('keeps the first response time and moves lastMessageAt on later replies', async () => {
      const id = await startConversation(acme);
      const first = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'one' }).expect(201);
      const second = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'x'.repeat(4096) }).expect(201);
      const record = await storedConversation(acme, id);
      expect(record?.firstResponseAt?.toISOString()).toBe(first.body.createdAt);
      expect(record?.lastMessageAt?.toISOString()).toBe(second.body.createdAt);
      expect((await recorder.events()).map((event) => event.type)).toEqual(['message.sent', 'message.sent']);
    });

    it('refuses to add to a closed conversation (400) and stores nothing', async () => {
      const id = await startConversation(acme);
      await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}).expect(200);
      await recorder.clear();
      const response = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'hello?' }).expect(400);
      expect(response.body.message).toBe(`Conversation ${id} is closed; messages cannot be added to it`);
      expect(await storedMessages(acme, id)).toEqual([]);
      expect(await recorder.events()).toEqual([]);
    });

    it('answers 404 for a foreign, missing or malformed conversation and stores nothing', async () => {
      const id = await startConversation(acme);
      await t.http.post(`/v1/conversations/${id}/messages`).set(globex.auth).send({ text: 'hi' }).expect(404);
      await t.http.post('/v1/conversations/6650f0c2a1b2c3d4e5f60718/messages').set(acme.auth).send({ text: 'hi' }).expect(404);
      await t.http.post('/v1/conversations/nope/messages').set(acme.auth).send({ text: 'hi' }).expect(404);
      expect(await storedMessages(acme, id)).toEqual([]);
      expect((await storedConversation(acme, id))?.lastMessageAt).toBeNull();
      expect(await recorder.events()).toEqual([]);
    });

    it('answers 400 for missing, empty, too long, wrongly typed, unknown and operator fields', async () => {
      const id = await startConversation(acme);
      const cases: unknown[] = [
        {},
        { text: '' },
        { text: 'x'.repeat(4097) },
        { text: 42 },
        { text: ['a'] },
        { text: 'hi', type: 'image' },
        { text: { $gt: '' } },
      ];
      for (const body of cases) {
        const response = await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send(body as object);
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
      }
      expect(await storedMessages(acme, id)).toEqual([]);
    });
  });

  describe('GET', () => {
    // m0..m4 one second apart; m5 and m6 share m4's millisecond, so they order by id after it.
    const times = [
      '2024-05-01T10:00:00.000Z',
      '2024-05-01T10:00:01.000Z',
      '2024-05-01T10:00:02.000Z',
      '2024-05-01T10:00:03.000Z',
      '2024-05-01T10:00:04.000Z',
      '2024-05-01T10:00:04.000Z',
      '2024-05-01T10:00:04.000Z',
    ];
    let conversationId: string;
    let m: string[];

    beforeAll(async () => {
      conversationId = await startConversation(acme);
      m = await seed(acme, conversationId, times);
      // Another conversation's messages in the same times must never show up.
      await seed(acme, await startConversation(acme), times);
    });

    const page = async (query: Record<string, string | number>): Promise<PageBody> =>
      (await t.http.get(`/v1/conversations/${conversationId}/messages`).query(query).set(acme.auth).expect(200)).body;
    const ids = (body: PageBody) => body.data.map((message) => message.id);

    async function walk(query: Record<string, string | number>): Promise<string[][]> {
      const pages: string[][] = [];
      let body = await page(query);
      pages.push(ids(body));
      while (body.nextCursor) {
        body = await page({ limit: query.limit, cursor: body.nextCursor });
        pages.push(ids(body));
      }
      return pages;
    }

    it('answers the newest messages in ascending order, 50 by default', async () => {
      const body = await page({});
      expect(ids(body)).toEqual(m);
      expect(body.nextCursor).toBeNull();
      expect(body.data[0]).toMatchObject({ text: 'message 0', createdAt: times[0], direction: 'inbound' });
    });

    it('without after, pages backwards: each page ascending, ties ordered by id', async () => {
      expect(await walk({ limit: 2 })).toEqual([[m[5], m[6]], [m[3], m[4]], [m[1], m[2]], [m[0]]]);
      expect(await walk({ limit: 3 })).toEqual([[m[4], m[5], m[6]], [m[1], m[2], m[3]], [m[0]]]);
    });

    it('before is exclusive and takes ISO-8601, offsets, dates or epoch milliseconds', async () => {
      expect(ids(await page({ before: '2024-05-01T10:00:03Z', limit: 2 }))).toEqual([m[1], m[2]]);
      expect(ids(await page({ before: '2024-05-01T12:00:03+02:00', limit: 2 }))).toEqual([m[1], m[2]]);
      expect(ids(await page({ before: String(Date.parse(times[3])), limit: 2 }))).toEqual([m[1], m[2]]);
      expect(ids(await page({ before: '2024-05-01T10:00:04.000Z' }))).toEqual([m[0], m[1], m[2], m[3]]);
      expect(ids(await page({ before: '2024-05-01' }))).toEqual([]);
      expect(await walk({ before: '2024-05-01T10:00:04Z', limit: 3 })).toEqual([[m[1], m[2], m[3]], [m[0]]]);
    });

    it('with after, pages forwards from the oldest newer message', async () => {
      expect(await walk({ after: times[1], limit: 2 })).toEqual([[m[2], m[3]], [m[4], m[5]], [m[6]]]);
      expect(await walk({ after: String(Date.parse(times[3])), limit: 1 })).toEqual([[m[4]], [m[5]], [m[6]]]);
      expect(ids(await page({ after: '2024-05-02' }))).toEqual([]);
      expect(ids(await page({ after: '2024-05-01' }))).toEqual(m);
    });

    it('with both, answers the window between them, ascending, and the cursor keeps its upper bound', async () => {
      expect(await walk({ after: times[0], before: times[4], limit: 2 })).toEqual([[m[1], m[2]], [m[3]]]);
      expect(await walk({ after: '2024-05-01T09:00:00Z', before: '2024-05-01T10:00:02.001Z', limit: 2 })).toEqual([
        [m[0], m[1]],
        [m[2]],
      ]);
    });

    it('never repeats or skips while new messages arrive', async () => {
      const live = await startConversation(acme);
      const send = (text: string) =>
        t.http.post(`/v1/conversations/${live}/messages`).set(acme.auth).send({ text }).expect(201);
      const sent: string[] = [];
      for (let index = 0; index < 5; index += 1) sent.push((await send(`old ${index}`)).body.id);

      const backwards: string[] = [];
      let body: PageBody = (await t.http.get(`/v1/conversations/${live}/messages?limit=2`).set(acme.auth).expect(200)).body;
      backwards.unshift(...ids(body));
      while (body.nextCursor) {
        await send('arrives while paging back');
        body = (
          await t.http.get(`/v1/conversations/${live}/messages`).query({ limit: 2, cursor: body.nextCursor }).set(acme.auth).expect(200)
        ).body;
        backwards.unshift(...ids(body));
      }
      expect(backwards).toEqual(sent);

      const all = (await t.http.get(`/v1/conversations/${live}/messages?limit=100`).set(acme.auth).expect(200)).body as PageBody;
      const forwards: string[] = [];
      body = (
        await t.http.get(`/v1/conversations/${live}/messages`).query({ limit: 3, after: '2000-01-01' }).set(acme.auth).expect(200)
      ).body;
      forwards.push(...ids(body));
      const late = (await send('arrives while paging forward')).body.id as string;
      while (body.nextCursor) {
        body = (
          await t.http.get(`/v1/conversations/${live}/messages`).query({ limit: 3, cursor: body.nextCursor }).set(acme.auth).expect(200)
        ).body;
        forwards.push(...ids(body));
      }
      expect(forwards).toEqual([...ids(all), late]);
    });

    it('answers 400 for bad times, limits, cursors and smuggled operators', async () => {
      const { body } = await t.http
        .get(`/v1/conversations/${conversationId}/messages?limit=2`)
        .set(acme.auth)
        .expect(200);
      const cursor = body.nextCursor as string;
      const bad: [string, string | RegExp][] = [
        ['before=yesterday', 'before must be an ISO-8601 time with a zone (or a date), or epoch milliseconds'],
        ['after=2024-13-01', 'after must be an ISO-8601 time with a zone (or a date), or epoch milliseconds'],
        ['after=2024-05-01T10:00:00', /^after must be/],
        ['before=-5', /^before must be/],
        ['limit=0', 'limit must not be less than 1'],
        ['limit=101', 'limit must not be greater than 100'],
        ['cursor=bm90LWEtY3Vyc29y', 'Invalid pagination cursor'],
        [`cursor=${cursor}&before=2024-05-01`, 'cursor already carries its position and bounds: send it without before or after'],
        [`after=${encodeURIComponent(times[2])}&before=${encodeURIComponent(times[2])}`, 'before must be later than after'],
        ['before[$gt]=1', /\$gt/],
        ['startAfter=abc', 'startAfter is not a parameter of this query'],
        ['before=1&before=2', /^before must be/],
      ];
      for (const [query, message] of bad) {
        const response = await t.http.get(`/v1/conversations/${conversationId}/messages?${query}`).set(acme.auth);
        expect({ query, status: response.status }).toEqual({ query, status: 400 });
        const detail = String(response.body.detail);
        if (typeof message === 'string') expect({ query, detail }).toEqual({ query, detail: message });
        else expect(detail).toMatch(message);
      }
    });

    it('answers 404 for another company’s, a missing or a malformed conversation', async () => {
      const foreign = await t.http.get(`/v1/conversations/${conversationId}/messages`).set(globex.auth).expect(404);
      expect(JSON.stringify(foreign.body)).not.toContain('message 0');
      await t.http.get('/v1/conversations/6650f0c2a1b2c3d4e5f60718/messages').set(acme.auth).expect(404);
      await t.http.get('/v1/conversations/abc/messages').set(acme.auth).expect(404);
    });
  });

  describe('MessagesService.sendMedia (used by the media upload)', () => {
    const media = () => ({ id: new Types.ObjectId(), fileName: 'receipt.pdf', mimeType: 'application/pdf', size: 48213 });

    it('stores a media message with its caption, updates the conversation and emits message.sent', async () => {
      const id = await startConversation(acme);
      const file = media();
      const message = await t.app
        .get(MessagesService)
        .sendMedia(agentOf(acme), { conversationId: id, type: 'document', caption: 'Your receipt', media: file });
      expect(message).toEqual({
        id: expect.stringMatching(/^[0-9a-f]{24}$/),
        conversationId: id,
        direction: 'outbound',
        type: 'document',
        text: null,
        caption: 'Your receipt',
        media: {
          id: file.id.toHexString(),
          fileName: 'receipt.pdf',
          mimeType: 'application/pdf',
          size: 48213,
          url: `/v1/media/${file.id.toHexString()}`,
        },
        template: null,
        senderType: 'agent',
        senderId: acme.agentId,
        externalId: null,
        delivery: { status: 'pending', updatedAt: message.createdAt },
        private: false,
        mentions: [],
        createdAt: expect.any(String),
      });
      const conversation = await storedConversation(acme, id);
      expect(conversation?.lastMessageAt?.toISOString()).toBe(message.createdAt);
      expect(conversation?.firstResponseAt?.toISOString()).toBe(message.createdAt);
      expect(await recorder.events()).toEqual([
        expect.objectContaining({ type: 'message.sent', data: { message, conversation: expect.objectContaining({ id }) } }),
      ]);
      const listed = await t.http.get(`/v1/conversations/${id}/messages`).set(acme.auth).expect(200);
      // The page's media carries a signed link (REST answers only; the event's does not).
      expect(listed.body.data).toEqual([{ ...message, media: { ...message.media, downloadUrl: expect.stringMatching(/^\/v1\/media\/signed\//), downloadUrlExpiresAt: expect.any(String) } }]);
    });

    it('refuses a missing, foreign or malformed conversation as a 400 on conversationId', async () => {
      const foreign = await startConversation(globex);
      for (const conversationId of [foreign, '6650f0c2a1b2c3d4e5f60718', 'nope']) {
        const attempt = t.app.get(MessagesService).sendMedia(agentOf(acme), { conversationId, type: 'image', media: media() });
        await expect(attempt).rejects.toThrow(RequestValidationException);
        await expect(attempt).rejects.toMatchObject({ problems: [{ field: 'conversationId', message: 'conversation not found' }] });
      }
      expect(await storedMessages(globex, foreign)).toEqual([]);
      expect(await recorder.events()).toEqual([]);
    });

    it('refuses a closed conversation with a 400', async () => {
      const id = await startConversation(acme);
      await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}).expect(200);
      await recorder.clear();
      const attempt = t.app.get(MessagesService).sendMedia(agentOf(acme), { conversationId: id, type: 'audio', media: media() });
      await expect(attempt).rejects.toThrow(new BadRequestException(`Conversation ${id} is closed; messages cannot be added to it`));
      expect(await storedMessages(acme, id)).toEqual([]);
      expect(await recorder.events()).toEqual([]);
    });
  });

  it('documents both message routes with their parameters, bodies and errors', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const path = document.paths['/v1/conversations/{id}/messages'];
    expect(path.get.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(
      ['after', 'before', 'cursor', 'id', 'limit', 'private'],
    );
    expect(Object.keys(path.get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '429']));
    expect(path.post.requestBody.content['application/json'].schema.$ref).toBe('#/components/schemas/SendMessageDto');
    expect(Object.keys(path.post.responses)).toEqual(expect.arrayContaining(['201', '400', '401', '404', '429']));
  });
});
