import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Controller, Header, Post, VERSION_NEUTRAL } from '@nestjs/common';
import { getConnectionToken } from '@nestjs/mongoose';
import { ApiBearerAuth } from '@nestjs/swagger';
import { Types, type Connection } from 'mongoose';
import type { Response } from 'supertest';
import { ApiKeyAuth } from '../../src/auth/decorators/api-key-auth.decorator.js';
import { IdempotencyRecord } from '../../src/common/idempotency/idempotency-record.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import * as samples from '../fixtures/media/samples.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

/** Test-only routes: one that waits until the test lets it finish, one that fails the first time. */
const probe = { calls: 0, waiting: [] as Array<() => void> };

async function slow(): Promise<{ call: number }> {
  probe.calls += 1;
  const call = probe.calls;
  await new Promise<void>((resolve) => probe.waiting.push(resolve));
  return { call };
}

function failingOnce(): { call: number } {
  probe.calls += 1;
  if (probe.calls === 1) throw new Error('the first attempt fails');
  return { call: probe.calls };
}

@ApiBearerAuth()
@Controller('idempotency-probe')
class ProbeController {
  @Post('slow')
  @Header('Location', '/v1/idempotency-probe/made')
  @Header('Cache-Control', 'no-store')
  slow() {
    return slow();
  }

  @Post('failing-once')
  failingOnce() {
    return failingOnce();
  }
}

@ApiKeyAuth()
@Controller({ path: 'api/external/idempotency-probe', version: VERSION_NEUTRAL })
class ExternalProbeController {
  @Post('slow')
  slow() {
    return slow();
  }
}

const INBOUND = '/api/external/messages';

describe('Idempotency-Key', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let acmeKey: string;
  let globexKey: string;
  let sequence = 0;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' }, controllers: [ProbeController, ExternalProbeController] });
    acme = await registerCompany(t.http, 'Acme');
    globex = await registerCompany(t.http, 'Globex');
    acmeKey = await createApiKey(t.http, acme, ['messages:write']);
    globexKey = await createApiKey(t.http, globex, ['messages:write']);
  });
  beforeEach(() => {
    probe.calls = 0;
    probe.waiting = [];
  });
  afterAll(() => t.close());

  const records = () => t.model<IdempotencyRecord & { companyId: Types.ObjectId }>(IdempotencyRecord.name);
  const recordsOf = (company: TestCompany) => records().find({ companyId: company.companyId }).lean();
  const recordOf = (company: TestCompany, key: string) => records().findOne({ companyId: company.companyId, key }).lean();

  function newKey(): string {
    sequence += 1;
    return `key-${sequence}-${Date.now()}`;
  }

  function newPhone(): string {
    sequence += 1;
    return `+1415666${String(sequence).padStart(4, '0')}`;
  }

  const inbound = (apiKey: string, body: object, key?: string, requestId?: string) => {
    const request = t.http.post(INBOUND).set('x-api-key', apiKey);
    if (key !== undefined) request.set('Idempotency-Key', key);
    if (requestId) request.set('x-request-id', requestId);
    return request.send(body);
  };

  const reply = (company: TestCompany, conversationId: string, body: object, key?: string) => {
    const request = t.http.post(`/v1/conversations/${conversationId}/messages`).set(company.auth);
    if (key !== undefined) request.set('Idempotency-Key', key);
    return request.send(body);
  };

  /** A new contact's message, which opens a conversation: answers its id. */
  async function openConversation(apiKey = acmeKey): Promise<string> {
    const response = await inbound(apiKey, { from: { phone: newPhone() }, text: 'hello' }).expect(201);
    return response.body.data.conversation.id as string;
  }

  const messagesIn = (conversationId: string, company = acme) =>
    t.model<Message>(Message.name).find({ companyId: company.companyId, conversationId: new Types.ObjectId(conversationId) }).lean();

  /** The same answer, bytes included, plus the replay header. */
  function expectReplayOf(replayed: Response, first: Response): void {
    expect(replayed.status).toBe(first.status);
    expect(replayed.headers['content-type']).toBe(first.headers['content-type']);
    expect(replayed.text).toBe(first.text);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
  }

  describe('Interface A: an agent reply', () => {
    it('runs once and answers a repeat with the kept answer, byte for byte, and Idempotent-Replayed: true', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      const first = await reply(acme, conversationId, { text: 'On its way' }, key).set('x-request-id', 'first-try').expect(201);
      const second = await reply(acme, conversationId, { text: 'On its way' }, key).set('x-request-id', 'second-try');
      expectReplayOf(second, first);
      expect(Number(second.headers['content-length'])).toBe(Buffer.byteLength(first.text));
      // The request id names the request, not the answer.
      expect(second.headers['x-request-id']).toBe('second-try');
      expect(second.headers['x-ratelimit-limit']).toBe('100000');
      const outbound = (await messagesIn(conversationId)).filter((message) => message.direction === 'outbound');
      expect(outbound.map((message) => message.text)).toEqual(['On its way']);
    });

    it('compares the body as content: key order and whitespace do not make it another body', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      const first = await reply(acme, conversationId, { text: 'Same' }, key).expect(201);
      const spaced = await t.http
        .post(`/v1/conversations/${conversationId}/messages`)
        .set(acme.auth)
        .set('Idempotency-Key', key)
        .set('content-type', 'application/json')
        .send('{ "text" :  "Same" }');
      expectReplayOf(spaced, first);
    });

    it('takes the draft\'s quoted form "key" as the same key', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      const first = await reply(acme, conversationId, { text: 'Quoted' }, key).expect(201);
      expectReplayOf(await reply(acme, conversationId, { text: 'Quoted' }, `"${key}"`), first);
    });

    it('answers 422 (problem details) for the same key with another body, and changes nothing', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      await reply(acme, conversationId, { text: 'First' }, key).expect(201);
      const response = await reply(acme, conversationId, { text: 'Second' }, key).expect(422);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({
        status: 422,
        title: 'Unprocessable Entity',
        detail: 'This Idempotency-Key was used with a different request body; use a new key',
        requestId: response.headers['x-request-id'],
      });
      expect(response.headers['idempotent-replayed']).toBeUndefined();
      const texts = (await messagesIn(conversationId)).map((message) => message.text);
      expect(texts.sort()).toEqual(['First', 'hello']);
    });

    it('answers 422 for the same key on another route, even one only the path id tells apart', async () => {
      const [a, b] = [await openConversation(), await openConversation()];
      const key = newKey();
      await reply(acme, a, { text: 'To A' }, key).expect(201);
      const otherConversation = await reply(acme, b, { text: 'To A' }, key).expect(422);
      expect(otherConversation.body.detail).toBe(
        `This Idempotency-Key was used for another request (POST /v1/conversations/${a}/messages); use a new key`,
      );
      await t.http.post(`/v1/conversations/${a}/close`).set(acme.auth).set('Idempotency-Key', key).send({}).expect(422);
      expect(await messagesIn(b)).toHaveLength(1);
      const conversation = await t.http.get(`/v1/conversations/${a}`).set(acme.auth).expect(200);
      expect(conversation.body.status).not.toBe('closed');
    });

    it('keeps a 4xx answer and replays it', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      const first = await reply(acme, conversationId, { text: '' }, key).expect(400);
      const second = await reply(acme, conversationId, { text: '' }, key);
      expectReplayOf(second, first);
      // The body is the first answer's, request id included; the header is this request's.
      expect(second.body.requestId).toBe(first.headers['x-request-id']);
      expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
      expect(await recordOf(acme, key)).toMatchObject({ state: 'done', status: 400 });
    });

    it('stores nothing without the header', async () => {
      const conversationId = await openConversation();
      const before = (await recordsOf(acme)).length;
      await reply(acme, conversationId, { text: 'Twice' }).expect(201);
      await reply(acme, conversationId, { text: 'Twice' }).expect(201);
      expect((await recordsOf(acme)).length).toBe(before);
      expect((await messagesIn(conversationId)).filter((message) => message.text === 'Twice')).toHaveLength(2);
    });

    it.each([
      ['empty', ''],
      ['256 characters', 'k'.repeat(256)],
      ['a space', 'two words'],
      ['a control character', 'tab\there'],
      ['a character outside ASCII', 'clé'],
    ])('answers 400 for a key with %s, and runs nothing', async (_, key) => {
      const conversationId = await openConversation();
      const response = await reply(acme, conversationId, { text: 'Bad key' }, key).expect(400);
      expect(response.body.detail).toBe('Idempotency-Key must be 1 to 255 visible ASCII characters, sent once');
      expect(await messagesIn(conversationId)).toHaveLength(1);
    });

    it('answers 400 for two Idempotency-Key headers', async () => {
      const conversationId = await openConversation();
      const response = await t.http
        .post(`/v1/conversations/${conversationId}/messages`)
        .set(acme.auth)
        .set('Idempotency-Key', ['one', 'two'] as unknown as string) // sent as two header lines
        .send({ text: 'Two keys' })
        .expect(400);
      expect(response.body.detail).toMatch(/^Idempotency-Key must be/);
    });

    it('accepts 255 visible ASCII characters', async () => {
      const conversationId = await openConversation();
      const key = `${newKey()}~!#$%&'()*+,-./:;<=>?@[\\]^_\`{|}`.padEnd(255, 'z');
      const first = await reply(acme, conversationId, { text: 'Long key' }, key).expect(201);
      expectReplayOf(await reply(acme, conversationId, { text: 'Long key' }, key), first);
    });

    it('answers 409 to a repeat while the first request runs, then replays its answer', async () => {
      const key = newKey();
      const first = t.http.post('/v1/idempotency-probe/slow').set(acme.auth).set('Idempotency-Key', key).send({ n: 1 }).then((r) => r);
      await waitFor(() => probe.waiting.length === 1, { message: 'the first request to run' });
      const concurrent = await t.http.post('/v1/idempotency-probe/slow').set(acme.auth).set('Idempotency-Key', key).send({ n: 1 });
      expect(concurrent.status).toBe(409);
      expect(concurrent.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(concurrent.body.detail).toBe('A request with this Idempotency-Key is still being processed; retry later');
      probe.waiting[0]();
      expect((await first).status).toBe(201);
      const repeat = await t.http.post('/v1/idempotency-probe/slow').set(acme.auth).set('Idempotency-Key', key).send({ n: 1 });
      expectReplayOf(repeat, await first);
      expect(repeat.body).toEqual({ call: 1 });
      // The answer's own headers come again, though the route's @Header()s are not applied to a replay.
      expect(repeat.headers).toMatchObject({ location: '/v1/idempotency-probe/made', 'cache-control': 'no-store' });
      expect(probe.calls).toBe(1);
    });

    it('does not keep a 500: the retry runs again', async () => {
      const key = newKey();
      await t.http.post('/v1/idempotency-probe/failing-once').set(acme.auth).set('Idempotency-Key', key).send({}).expect(500);
      expect(await recordOf(acme, key)).toBeNull();
      const retry = await t.http.post('/v1/idempotency-probe/failing-once').set(acme.auth).set('Idempotency-Key', key).send({}).expect(201);
      expect(retry.body).toEqual({ call: 2 });
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect(await recordOf(acme, key)).toMatchObject({ state: 'done', status: 201 });
    });

    it('takes over a running claim whose lease lapsed (its process died), and only the taker keeps its answer', async () => {
      const key = newKey();
      const abandoned = t.http.post('/v1/idempotency-probe/slow').set(acme.auth).set('Idempotency-Key', key).send({}).then((r) => r);
      await waitFor(() => probe.waiting.length === 1, { message: 'the first request to run' });
      await records().updateOne({ companyId: acme.companyId, key }, { $set: { leaseExpiresAt: new Date(Date.now() - 1000) } });
      const retry = t.http.post('/v1/idempotency-probe/slow').set(acme.auth).set('Idempotency-Key', key).send({}).then((r) => r);
      await waitFor(() => probe.waiting.length === 2, { message: 'the retry to run' });
      probe.waiting[1]();
      expect((await retry).body).toEqual({ call: 2 });
      probe.waiting[0]();
      expect((await abandoned).body).toEqual({ call: 1 });
      const repeat = await t.http.post('/v1/idempotency-probe/slow').set(acme.auth).set('Idempotency-Key', key).send({});
      expectReplayOf(repeat, await retry);
    });

    it('does not replay an expired answer (the TTL monitor has not removed it yet): the request runs again', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      await reply(acme, conversationId, { text: 'Again' }, key).expect(201);
      const kept = await recordOf(acme, key);
      expect(kept!.expiresAt.getTime() - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
      await records().updateOne({ companyId: acme.companyId, key }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
      const again = await reply(acme, conversationId, { text: 'Again' }, key).expect(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect((await messagesIn(conversationId)).filter((message) => message.text === 'Again')).toHaveLength(2);
      expectReplayOf(await reply(acme, conversationId, { text: 'Again' }, key), again);
    });

    it('runs again when the kept answer cannot be opened (JWT_SECRET changed since)', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      await reply(acme, conversationId, { text: 'Sealed' }, key).expect(201);
      await records().updateOne({ companyId: acme.companyId, key }, { $set: { body: Buffer.alloc(64, 1) } });
      const again = await reply(acme, conversationId, { text: 'Sealed' }, key).expect(201);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      expect((await messagesIn(conversationId)).filter((message) => message.text === 'Sealed')).toHaveLength(2);
    });

    it('keeps the body encrypted at rest', async () => {
      const conversationId = await openConversation();
      const key = newKey();
      await reply(acme, conversationId, { text: 'A secret-looking text' }, key).expect(201);
      const kept = await recordOf(acme, key);
      expect(Buffer.from(kept!.body!.buffer).toString('latin1')).not.toContain('secret-looking');
    });
  });

  describe('Interface B: an inbound message', () => {
    it('replays the kept answer byte for byte and stores the message once', async () => {
      const key = newKey();
      const body = { from: { phone: newPhone() }, text: 'Where is my order?' };
      const first = await inbound(acmeKey, body, key, 'inbound-1').expect(201);
      const second = await inbound(acmeKey, body, key, 'inbound-2');
      expectReplayOf(second, first);
      expect(second.headers['x-request-id']).toBe('inbound-2');
      expect(await messagesIn(first.body.data.conversation.id)).toHaveLength(1);
      expect(await recordOf(acme, key)).toMatchObject({
        route: 'POST /api/external/messages',
        path: '/api/external/messages',
        state: 'done',
        status: 201,
        headers: { 'content-type': 'application/json; charset=utf-8' },
      });
    });

    it('answers 422 in the envelope for another body', async () => {
      const key = newKey();
      const phone = newPhone();
      const first = await inbound(acmeKey, { from: { phone }, text: 'One' }, key).expect(201);
      const response = await inbound(acmeKey, { from: { phone }, text: 'Two' }, key).expect(422);
      expect(response.body).toEqual({
        success: false,
        error: 'This Idempotency-Key was used with a different request body; use a new key',
      });
      expect(await messagesIn(first.body.data.conversation.id)).toHaveLength(1);
    });

    it('answers 409 in the envelope while the first request runs', async () => {
      const key = newKey();
      const first = t.http.post('/api/external/idempotency-probe/slow').set('x-api-key', acmeKey).set('Idempotency-Key', key).send({}).then((r) => r);
      await waitFor(() => probe.waiting.length === 1, { message: 'the first request to run' });
      const concurrent = await t.http.post('/api/external/idempotency-probe/slow').set('x-api-key', acmeKey).set('Idempotency-Key', key).send({});
      expect(concurrent.status).toBe(409);
      expect(concurrent.body).toEqual({
        success: false,
        error: 'A request with this Idempotency-Key is still being processed; retry later',
      });
      probe.waiting[0]();
      expect((await first).status).toBe(201);
    });

    it('answers 409 to an inbound message whose key another process is running', async () => {
      const key = newKey();
      const now = Date.now();
      await records().create({
        companyId: new Types.ObjectId(acme.companyId),
        key,
        route: 'POST /api/external/messages',
        path: '/api/external/messages',
        claimId: 'another-process',
        state: 'running',
        leaseExpiresAt: new Date(now + 60_000),
        expiresAt: new Date(now + 3_600_000),
      });
      const response = await inbound(acmeKey, { from: { phone: newPhone() }, text: 'Busy' }, key).expect(409);
      expect(response.body.success).toBe(false);
    });

    it('scopes keys per company: the same key in two companies is two keys', async () => {
      const key = newKey();
      const body = { from: { phone: newPhone() }, text: 'Same key, two companies' };
      const inAcme = await inbound(acmeKey, body, key).expect(201);
      const inGlobex = await inbound(globexKey, body, key).expect(201);
      expect(inGlobex.headers['idempotent-replayed']).toBeUndefined();
      expect(inGlobex.body.data.message.id).not.toBe(inAcme.body.data.message.id);
      expect(inGlobex.body.data.conversation.companyId ?? globex.companyId).not.toBe(acme.companyId);
      expect(await recordOf(acme, key)).not.toBeNull();
      expect(await recordOf(globex, key)).not.toBeNull();
      // And a different body in the other company is not a 422 either.
      await inbound(globexKey, { ...body, text: 'Other' }, newKey()).expect(201);
    });
  });

  describe('media upload (multipart)', () => {
    let conversationId: string;

    beforeAll(async () => {
      conversationId = await openConversation();
    });

    const upload = (key: string, content: Buffer, caption = 'receipt') =>
      t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .set('Idempotency-Key', key)
        .field('conversationId', conversationId)
        .field('caption', caption)
        .attach('file', content, { filename: 'pixel.png', contentType: 'image/png' });

    const storedFiles = async () => {
      const db = t.app.get<Connection>(getConnectionToken()).db!;
      return db.collection('media.files').countDocuments({});
    };

    it('replays an upload sent again (a new multipart boundary) without storing the file twice', async () => {
      const key = newKey();
      const content = samples.png(64, 64, true);
      const filesBefore = await storedFiles();
      const first = await upload(key, content).expect(201);
      const second = await upload(key, content);
      expectReplayOf(second, first);
      expect(await storedFiles()).toBe(filesBefore + 1);
      const media = (await messagesIn(conversationId)).filter((message) => message.type === 'image');
      expect(media).toHaveLength(1);
    });

    it('answers 422 for another file or another caption under the same key, storing nothing', async () => {
      const key = newKey();
      await upload(key, samples.png(2, 2)).expect(201);
      const filesBefore = await storedFiles();
      await upload(key, samples.png(3, 3)).expect(422);
      await upload(key, samples.png(2, 2), 'another caption').expect(422);
      expect(await storedFiles()).toBe(filesBefore);
    });

    it('keeps a refused upload (400) and replays it', async () => {
      const key = newKey();
      const first = await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .set('Idempotency-Key', key)
        .field('conversationId', conversationId)
        .field('type', 'video')
        .attach('file', samples.png(), { filename: 'not-a-video.png' })
        .expect(400);
      const second = await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .set('Idempotency-Key', key)
        .field('conversationId', conversationId)
        .field('type', 'video')
        .attach('file', samples.png(), { filename: 'not-a-video.png' });
      expectReplayOf(second, first);
    });
  });

  describe('public POSTs', () => {
    it('ignores the header on login and register: their answers carry a token', async () => {
      const before = await records().collection.countDocuments({});
      const login = () =>
        t.http.post('/v1/auth/login').set('Idempotency-Key', 'login-key').send({ email: acme.email, password: acme.password });
      await login().expect(200);
      const again = await login().expect(200);
      expect(again.headers['idempotent-replayed']).toBeUndefined();
      await t.http.post('/v1/auth/login').set('Idempotency-Key', '').send({ email: acme.email, password: acme.password }).expect(200);
      expect(await records().collection.countDocuments({})).toBe(before);
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
        const shape = path.startsWith('/api/external')
          ? { 'application/json': { schema: { $ref: '#/components/schemas/ExternalErrorDto' } } }
          : { 'application/problem+json': { schema: { $ref: '#/components/schemas/ProblemDetailsDto' } } };
        for (const status of ['400', '409', '422']) {
          expect({ path, status, content: operation.responses[status]?.content }).toEqual({ path, status, content: shape });
          expect(operation.responses[status].description).toMatch(/Idempotency-Key/);
        }
        const success = Object.keys(operation.responses).filter((status) => status.startsWith('2'));
        for (const status of success) {
          expect(operation.responses[status].headers['Idempotent-Replayed']).toEqual({ $ref: '#/components/headers/IdempotencyKeyReplayed' });
        }
      }
      expect(document.components.headers.IdempotencyKeyReplayed.schema).toEqual({ type: 'string', enum: ['true'] });
    });
  });
});
