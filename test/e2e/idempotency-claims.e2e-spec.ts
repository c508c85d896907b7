import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Controller, Header, Post, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiExcludeController, ApiBearerAuth } from '@nestjs/swagger';
import { ApiKeyAuth } from '../../src/auth/decorators/api-key-auth.decorator.js';
import { expectReplayOf, IdempotencyClient, idempotencyRecords, newContactMessage, uniqueKey } from '../support/idempotency.js';
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

@ApiBearerAuth()
@ApiExcludeController()
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
    probe.calls += 1;
    if (probe.calls === 1) throw new Error('the first attempt fails');
    return { call: probe.calls };
  }
}

@ApiKeyAuth()
@ApiExcludeController()
@Controller({ path: 'api/external/idempotency-probe', version: VERSION_NEUTRAL })
class ExternalProbeController {
  @Post('slow')
  slow() {
    return slow();
  }
}

describe('Idempotency-Key: the claim (running, 409, 5xx, lapsed lease, expiry, sealed answers)', () => {
  let t: TestApp;
  let acme: IdempotencyClient;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' }, controllers: [ProbeController, ExternalProbeController] });
    acme = await IdempotencyClient.register(t, 'Acme');
  });
  beforeEach(() => {
    probe.calls = 0;
    probe.waiting = [];
  });
  afterAll(() => t.close());

  const records = () => idempotencyRecords(t);
  const post = (path: string, key: string) =>
    t.http.post(path).set(acme.company.auth).set('Idempotency-Key', key).send({ n: 1 });
  /** Sends now, answers when the response comes. */
  const started = (path: string, key: string) => post(path, key).then((response) => response);

  it('answers 409 (problem details) to a repeat while the first request runs, then replays its answer', async () => {
    const key = uniqueKey();
    const first = started('/v1/idempotency-probe/slow', key);
    await waitFor(() => probe.waiting.length === 1, { message: 'the first request to run' });
    const concurrent = await post('/v1/idempotency-probe/slow', key);
    expect(concurrent.status).toBe(409);
    expect(concurrent.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(concurrent.body.detail).toBe('A request with this Idempotency-Key is still being processed; retry later');
    probe.waiting[0]();
    expect((await first).status).toBe(201);
    const repeat = await post('/v1/idempotency-probe/slow', key);
    expectReplayOf(repeat, await first);
    expect(repeat.body).toEqual({ call: 1 });
    expect(probe.calls).toBe(1);
    // The answer's own headers come again, though the route's @Header()s are not applied to a replay.
    expect(repeat.headers).toMatchObject({ location: '/v1/idempotency-probe/made', 'cache-control': 'no-store' });
  });

  it('answers 409 in the envelope on Interface B', async () => {
    const key = uniqueKey();
    const send = () => t.http.post('/api/external/idempotency-probe/slow').set('x-api-key', acme.apiKey).set('Idempotency-Key', key).send({});
    const first = send().then((response) => response);
    await waitFor(() => probe.waiting.length === 1, { message: 'the first request to run' });
    const concurrent = await send();
    expect(concurrent.status).toBe(409);
    expect(concurrent.body).toEqual({ success: false, error: 'A request with this Idempotency-Key is still being processed; retry later' });
    probe.waiting[0]();
    expect((await first).status).toBe(201);
  });

  it('answers 409 to an inbound message whose key another process is running, and stores nothing', async () => {
    const key = uniqueKey();
    await acme.claimedElsewhere(key, '/api/external/messages');
    const response = await acme.inbound(newContactMessage('Busy'), key).expect(409);
    expect(response.body.success).toBe(false);
    expect(await acme.recordOf(key)).toMatchObject({ state: 'running', claimId: 'another-process' });
  });

  it('does not keep a 500: the retry runs again', async () => {
    const key = uniqueKey();
    await post('/v1/idempotency-probe/failing-once', key).expect(500);
    expect(await acme.recordOf(key)).toBeNull();
    const retry = await post('/v1/idempotency-probe/failing-once', key).expect(201);
    expect(retry.body).toEqual({ call: 2 });
    expect(retry.headers['idempotent-replayed']).toBeUndefined();
    expect(await acme.recordOf(key)).toMatchObject({ state: 'done', status: 201 });
  });

  it('takes over a running claim whose lease lapsed (its process died), and only the taker keeps its answer', async () => {
    const key = uniqueKey();
    const abandoned = started('/v1/idempotency-probe/slow', key);
    await waitFor(() => probe.waiting.length === 1, { message: 'the first request to run' });
    await records().updateOne(acme.recordFilter(key), { $set: { leaseExpiresAt: new Date(Date.now() - 1000) } });
    const retry = started('/v1/idempotency-probe/slow', key);
    await waitFor(() => probe.waiting.length === 2, { message: 'the retry to run' });
    probe.waiting[1]();
    expect((await retry).body).toEqual({ call: 2 });
    probe.waiting[0]();
    expect((await abandoned).body).toEqual({ call: 1 });
    expectReplayOf(await post('/v1/idempotency-probe/slow', key), await retry);
  });

  it('does not replay an expired answer (the TTL monitor has not removed it yet): the request runs again', async () => {
    const conversationId = await acme.openConversation();
    const key = uniqueKey();
    await acme.reply(conversationId, { text: 'Again' }, key).expect(201);
    const kept = await acme.recordOf(key);
    expect(kept!.expiresAt.getTime() - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    await records().updateOne(acme.recordFilter(key), { $set: { expiresAt: new Date(Date.now() - 1000) } });
    const again = await acme.reply(conversationId, { text: 'Again' }, key).expect(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect((await acme.messagesIn(conversationId)).filter((message) => message.text === 'Again')).toHaveLength(2);
    expectReplayOf(await acme.reply(conversationId, { text: 'Again' }, key), again);
  });

  it('keeps the body sealed, and runs again when it cannot be opened (JWT_SECRET changed since)', async () => {
    const conversationId = await acme.openConversation();
    const key = uniqueKey();
    await acme.reply(conversationId, { text: 'A secret-looking text' }, key).expect(201);
    const kept = await acme.recordOf(key);
    expect(Buffer.from(kept!.body!.buffer).toString('latin1')).not.toContain('secret-looking');
    await records().updateOne(acme.recordFilter(key), { $set: { body: Buffer.alloc(64, 1) } });
    const again = await acme.reply(conversationId, { text: 'A secret-looking text' }, key).expect(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    const texts = (await acme.messagesIn(conversationId)).map((message) => message.text);
    expect(texts.filter((text) => text === 'A secret-looking text')).toHaveLength(2);
  });
});
