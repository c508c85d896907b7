import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  expectReplayOf,
  IdempotencyClient,
  idempotencyRecords,
  newContactMessage,
  uniqueKey,
} from '../support/idempotency.js';
import { addAgent, createApiKey } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('Idempotency-Key: replay, another body or route, malformed keys', () => {
  let t: TestApp;
  let acme: IdempotencyClient;
  let globex: IdempotencyClient;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await IdempotencyClient.register(t, 'Acme');
    globex = await IdempotencyClient.register(t, 'Globex');
  });
  afterAll(() => t.close());

  describe('Interface A: an agent reply', () => {
    it('runs once and answers a repeat with the kept answer, byte for byte, and Idempotent-Replayed: true', async () => {
      const conversationId = await acme.openConversation();
      const key = uniqueKey();
      const first = await acme.reply(conversationId, { text: 'On its way' }, key).set('x-request-id', 'first-try').expect(201);
      const second = await acme.reply(conversationId, { text: 'On its way' }, key).set('x-request-id', 'second-try');
      expectReplayOf(second, first);
      expect(Number(second.headers['content-length'])).toBe(Buffer.byteLength(first.text));
      // The request id and the rate-limit headers describe the request, not the answer.
      expect(second.headers['x-request-id']).toBe('second-try');
      expect(second.headers['x-ratelimit-limit']).toBe('100000');
      const outbound = (await acme.messagesIn(conversationId)).filter((message) => message.direction === 'outbound');
      expect(outbound.map((message) => message.text)).toEqual(['On its way']);
    });

    it('compares the body as content: key order and whitespace do not make it another body', async () => {
      const conversationId = await acme.openConversation();
      const key = uniqueKey();
      const first = await acme.reply(conversationId, { text: 'Same' }, key).expect(201);
      const spaced = await t.http
        .post(`/v1/conversations/${conversationId}/messages`)
        .set(acme.company.auth)
        .set('Idempotency-Key', key)
        .set('content-type', 'application/json')
        .send('{ "text" :  "Same" }');
      expectReplayOf(spaced, first);
    });

    it('takes the draft\'s quoted form "key" as the same key', async () => {
      const conversationId = await acme.openConversation();
      const key = uniqueKey();
      const first = await acme.reply(conversationId, { text: 'Quoted' }, key).expect(201);
      expectReplayOf(await acme.reply(conversationId, { text: 'Quoted' }, `"${key}"`), first);
    });

    it('answers 422 (problem details) for the same key with another body, and changes nothing', async () => {
      const conversationId = await acme.openConversation();
      const key = uniqueKey();
      await acme.reply(conversationId, { text: 'First' }, key).expect(201);
      const response = await acme.reply(conversationId, { text: 'Second' }, key).expect(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        status: 422,
        title: 'Unprocessable Entity',
        detail: 'This Idempotency-Key was used with a different request body; use a new key',
        requestId: response.headers['x-request-id'],
      });
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      const texts = (await acme.messagesIn(conversationId)).map((message) => message.text);
      expect(texts.sort()).toEqual(['First', 'hello']);
    });

    it('answers 422 for the same key on another route, even one only the path id tells apart', async () => {
      const [a, b] = [await acme.openConversation(), await acme.openConversation()];
      const key = uniqueKey();
      await acme.reply(a, { text: 'To A' }, key).expect(201);
      const otherConversation = await acme.reply(b, { text: 'To A' }, key).expect(422);
      expect(otherConversation.body.detail).toBe(
        `This Idempotency-Key was used for another request (POST /v1/conversations/${a}/messages); use a new key`,
      );
      await t.http.post(`/v1/conversations/${a}/close`).set(acme.company.auth).set('Idempotency-Key', key).send({}).expect(422);
      expect(await acme.messagesIn(b)).toHaveLength(1);
      const conversation = await t.http.get(`/v1/conversations/${a}`).set(acme.company.auth).expect(200);
      expect(conversation.body.status).not.toBe('closed');
    });

    it('keeps a 4xx answer and replays it', async () => {
      const conversationId = await acme.openConversation();
      const key = uniqueKey();
      const first = await acme.reply(conversationId, { text: '' }, key).expect(400);
      const second = await acme.reply(conversationId, { text: '' }, key);
      expectReplayOf(second, first);
      // The body is the first answer's, request id included; the header is this request's.
      expect(second.body.requestId).toBe(first.headers['x-request-id']);
      expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
      expect(await acme.recordOf(key)).toMatchObject({ state: 'done', status: 400 });
    });

    it('stores nothing without the header', async () => {
      const conversationId = await acme.openConversation();
      const before = (await acme.records()).length;
      await acme.reply(conversationId, { text: 'Twice' }).expect(201);
      await acme.reply(conversationId, { text: 'Twice' }).expect(201);
      expect((await acme.records()).length).toBe(before);
      expect((await acme.messagesIn(conversationId)).filter((message) => message.text === 'Twice')).toHaveLength(2);
    });

    it.each([
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['a space', 'two words'],
      ['a control character', 'tab\there'],
      ['a character outside ASCII', 'clé'],
    ])('answers 400 for a key with %s, and runs nothing', async (_, key) => {
      const conversationId = await acme.openConversation();
      const response = await acme.reply(conversationId, { text: 'Bad key' }, key).expect(400);
      expect(response.body.detail).toBe('Idempotency-Key must be 1 to 255 visible ASCII characters, sent once');
      expect(await acme.messagesIn(conversationId)).toHaveLength(1);
    });

    it('answers 400 for two Idempotency-Key headers', async () => {
      const conversationId = await acme.openConversation();
      const response = await t.http
        .post(`/v1/conversations/${conversationId}/messages`)
        .set(acme.company.auth)
        .set('Idempotency-Key', ['one', 'two'] as unknown as string) // sent as two header lines
        .send({ text: 'Two keys' })
        .expect(400);
      expect(response.body.detail).toMatch(/^Idempotency-Key must be/);
    });

    it('accepts 255 visible ASCII characters', async () => {
      const conversationId = await acme.openConversation();
      const key = `${uniqueKey()}~!#$%&'()*+,-./:;<=>?@[\\]^_\`{|}`.padEnd(255, 'z');
      const first = await acme.reply(conversationId, { text: 'Long key' }, key).expect(201);
      expectReplayOf(await acme.reply(conversationId, { text: 'Long key' }, key), first);
    });
  });

  describe('Interface B: an inbound message', () => {
    it('replays the kept answer byte for byte and stores the message once', async () => {
      const key = uniqueKey();
      const body = newContactMessage('Where is my order?');
      const first = await acme.inbound(body, key).set('x-request-id', 'inbound-1').expect(201);
      const second = await acme.inbound(body, key).set('x-request-id', 'inbound-2');
      expectReplayOf(second, first);
      expect(second.headers['x-request-id']).toBe('inbound-2');
      expect(await acme.messagesIn(first.body.data.conversation.id)).toHaveLength(1);
      expect(await acme.recordOf(key)).toMatchObject({
        route: 'POST /api/external/messages',
        path: '/api/external/messages',
        state: 'done',
        status: 201,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
    });

    it('answers 422 in the envelope for another body', async () => {
      const key = uniqueKey();
      const body = newContactMessage('One');
      const first = await acme.inbound(body, key).expect(201);
      const response = await acme.inbound({ ...body, text: 'Two' }, key).expect(422);
      expect(response.body).toEqual({
        success: false,
        error: 'This Idempotency-Key was used with a different request body; use a new key',
      });
      expect(await acme.messagesIn(first.body.data.conversation.id)).toHaveLength(1);
    });

    it('scopes keys per company: the same key in two companies is two keys', async () => {
      const key = uniqueKey();
      const body = newContactMessage('Same key, two companies');
      const inAcme = await acme.inbound(body, key).expect(201);
      const inGlobex = await globex.inbound(body, key).expect(201);
      expect(inGlobex.headers['idempotent-replayed']).toBeUndefined();
      expect(inGlobex.body.data.message.id).not.toBe(inAcme.body.data.message.id);
      expect(await globex.messagesIn(inGlobex.body.data.conversation.id)).toHaveLength(1);
      expect(await acme.recordOf(key)).not.toBeNull();
      expect(await globex.recordOf(key)).not.toBeNull();
    });
  });

  describe('the principal', () => {
    it("scopes keys per agent: another admin's same key and body makes a new API key, never the first admin's replayed", async () => {
      const other = await addAgent(t, acme.company, 'admin');
      const key = uniqueKey();
      const body = { name: 'Connector', scopes: ['messages:write'] };
      const create = (auth: { Authorization: string }) => t.http.post('/v1/api-keys').set(auth).set('Idempotency-Key', key).send(body);
      const mine = await create(acme.company.auth).expect(201);
      const theirs = await create(other.auth).expect(201);
      expect(theirs.headers['idempotent-replayed']).toBeUndefined();
      expect(theirs.body.key).not.toBe(mine.body.key);
      expect(theirs.body).toMatchObject({ createdBy: other.agentId });
      // each one's repeat is its own kept answer
      expectReplayOf(await create(other.auth), theirs);
      expectReplayOf(await create(acme.company.auth), mine);
    });

    it('scopes keys per API key, and keeps an API key and an agent apart', async () => {
      const secondKey = await createApiKey(t.http, acme.company, ['messages:write']);
      const key = uniqueKey();
      const body = newContactMessage('Same key, two API keys');
      const first = await acme.inbound(body, key).expect(201);
      const second = await t.http.post('/api/external/messages').set('x-api-key', secondKey).set('Idempotency-Key', key).send(body);
      // a new request: the externalId-free message is stored again, in the same conversation
      expect(second.status).toBe(201);
      expect(second.headers['idempotent-replayed']).toBeUndefined();
      expect(second.body.data.message.id).not.toBe(first.body.data.message.id);
      const conversationId = await acme.openConversation();
      const reply = await acme.reply(conversationId, { text: 'Agent with that key' }, key).expect(201);
      expect(reply.headers['idempotent-replayed']).toBeUndefined();
    });
  });

  describe('public POSTs', () => {
    it('ignores the header on login and register: their answers carry a token', async () => {
      const before = await idempotencyRecords(t).collection.countDocuments({});
      const { email, password } = acme.company;
      const login = (key: string) => t.http.post('/v1/auth/login').set('Idempotency-Key', key).send({ email, password });
      await login('login-key').expect(200);
      const again = await login('login-key').expect(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      await login('').expect(200);
      expect(await idempotencyRecords(t).collection.countDocuments({})).toBe(before);
    });
  });

  describe('OpenAPI', () => {
    it('documents the header once and references it from every authenticated POST, with 409 and 422 in each interface\'s shape', async () => {
      const { body: document } = await t.http.get('/docs-json').expect(200);
      expect(document.components.parameters.IdempotencyKey).toMatchObject({
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        schema: { type: 'string', minLength: 1, maxLength: 255 },
      });
      expect(document.components.headers.IdempotencyKeyReplayed.schema).toEqual({ type: 'string', enum: ['true'] });
      const posts = Object.entries(document.paths as Record<string, { post?: any }>)
        .filter(([, item]) => item.post)
        .map(([path, item]) => [path, item.post] as const);
      expect(posts.length).toBeGreaterThan(10);
      for (const [path, operation] of posts) {
        const references = (operation.parameters ?? []).filter((p: { $ref?: string }) => p.$ref === '#/components/parameters/IdempotencyKey');
        if (path === '/v1/auth/login' || path === '/v1/auth/register') {
          expect({ path, references }).toEqual({ path, references: [] });
          continue;
        }
        expect({ path, references: references.length }).toEqual({ path, references: 1 });
        // A 409 may be documented as a problem of its own type (reply-window-closed), whose schema extends ProblemDetailsDto.
        const problem = (status: string) =>
          status === '409' ? expect.stringMatching(/^#\/components\/schemas\/(ProblemDetailsDto|ReplyWindowClosedProblemDto)$/) : '#/components/schemas/ProblemDetailsDto';
        const shapeOf = (status: string) =>
          path.startsWith('/api/external')
            ? { 'application/json': { schema: { $ref: '#/components/schemas/ExternalErrorDto' }, example: expect.objectContaining({ success: false }) } }
            : { 'application/problem+json': { schema: { $ref: problem(status) }, example: expect.objectContaining({ status: expect.any(Number) }) } };
        for (const status of ['400', '409', '422']) {
          const shape = shapeOf(status);
          expect({ path, status, content: operation.responses[status]?.content }).toEqual({ path, status, content: shape });
          expect(operation.responses[status].description).toMatch(/Idempotency-Key/);
        }
        for (const status of Object.keys(operation.responses).filter((code) => code.startsWith('2'))) {
          expect(operation.responses[status].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/IdempotencyKeyReplayed' });
        }
      }
    });
  });
});
