import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import { EventStreamSlot } from '../../src/event-feed/event-stream-slot.schema.js';
import { EventStreams } from '../../src/event-feed/event-streams.service.js';
import { EventTailer } from '../../src/event-feed/event-tailer.js';
import { publishEvents } from '../support/event-feed.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { addAgent, createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { listen, SseClients } from '../support/sse-client.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

/**
 * A client that sends the request, reads the response head, then never reads again: the kernel's buffers
 * fill, then the server's.
 */
async function stalledStream(base: string, path: string, headers: Record<string, string>): Promise<{ socket: Socket; head: string }> {
  const { hostname, port } = new URL(base);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  const lines = Object.entries({ host: `${hostname}:${port}`, accept: 'text/event-stream', ...headers }).map(([name, value]) => `${name}: ${value}`);
  socket.write(`GET ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
  let head = '';
  await new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.pause();
      resolve();
    };
    socket.on('data', onData);
  });
  return { socket, head };
}

/** Resumes a stalled client and waits for the server's end of its connection (cut, or ended). */
async function connectionEnd(socket: Socket): Promise<void> {
  socket.on('error', () => undefined);
  socket.resume();
  if (!socket.destroyed) await once(socket, 'close');
}

const MAX_BUFFER = 64 * 1024;

describe('the event stream limits: the per-company cap, backpressure, shutdown', () => {
  let deployment: Deployment;
  let t: TestApp;
  let other: TestApp;
  let bases: string[];
  const clients = new SseClients();

  beforeAll(async () => {
    deployment = await startDeployment('eventlimits', { EVENT_STREAMS_PER_COMPANY: '2', EVENT_STREAM_MAX_BUFFER_BYTES: String(MAX_BUFFER) });
    [t, other] = deployment.apps;
    bases = deployment.bases;
  });
  afterEach(() => clients.closeAll());
  afterAll(() => deployment.stop());

  const open = (base: string, path: string, headers: Record<string, string>) => clients.open(base + path, headers);
  const slotsOf = (company: TestCompany) => t.model<EventStreamSlot>(EventStreamSlot.name).countDocuments({ companyId: company.companyId });

  it('holds EVENT_STREAMS_PER_COMPANY open streams per company across processes; one more is a 429 in the interface\'s shape', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const globex = await registerCompany(t.http, 'Globex');
    const key = await createApiKey(t.http, acme, ['events:read']);
    const first = await open(bases[0], '/v1/events/stream', acme.auth);
    const second = await open(bases[1], '/api/external/events/stream', { 'x-api-key': key });
    expect([first.status, second.status]).toEqual([200, 200]);

    for (const base of bases) {
      const refused = await open(base, '/v1/events/stream', acme.auth);
      expect(refused.status).toBe(429);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.headers['retry-after']).toBe('10');
      expect(JSON.parse(refused.body)).toMatchObject({ status: 429, detail: 'At most 2 event streams may be open at once for a company: close one, or retry later' });
      const envelope = await open(base, '/api/external/events/stream', { 'x-api-key': key });
      expect(envelope.status).toBe(429);
      expect(JSON.parse(envelope.body)).toEqual({ success: false, error: expect.stringContaining('At most 2 event streams') });
    }
    expect((await open(bases[1], '/v1/events/stream', globex.auth)).status).toBe(200);
    expect(await slotsOf(acme)).toBe(2);

    // A stream that ends frees its slot, in whichever process.
    second.close();
    await waitFor(async () => (await slotsOf(acme)) === 1, { message: "the closed stream's slot to be freed" });
    const third = await open(bases[0], '/v1/events/stream', acme.auth);
    expect(third.status).toBe(200);
    const published = await publishEvents(other, acme.companyId, 2);
    await third.waitForEvents(2);
    expect(third.data.map((event) => event.id)).toEqual(published.map((event) => event.id));
  });

  it('disconnects a live stream whose client leaves more than EVENT_STREAM_MAX_BUFFER_BYTES unread, and only that one', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const tailer = t.app.get(EventTailer);
    const { socket, head } = await stalledStream(bases[0], '/v1/events/stream', acme.auth);
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    const reader = await open(bases[0], '/v1/events/stream', acme.auth);
    await waitFor(() => tailer.openStreams === 2, { message: 'both streams open' });

    // 32 KiB events until the stalled one is cut: the kernel's socket buffers take a few MiB first.
    let published = 0;
    while (tailer.openStreams === 2 && published < 600) {
      await publishEvents(t, acme.companyId, 10, { padding: 32 * 1024, oneBatch: true });
      published += 10;
    }
    expect(tailer.openStreams).toBe(1);
    await connectionEnd(socket);
    await reader.waitForEvents(published, 20_000);
    expect(reader.status).toBe(200);
    expect(new Set(reader.data.map((event) => event.id)).size).toBe(published);
    await waitFor(async () => (await slotsOf(acme)) === 1, { message: "the cut stream's slot to be freed" });
  });

  describe('a process shutting down', () => {
    let closing: TestApp;
    let base: string;

    beforeAll(async () => {
      ({ app: closing, base } = await deployment.add({ EVENT_STREAM_KEEPALIVE_MS: '250' }));
    });

    it('cuts a client that takes nothing for two keep-alive intervals and 5 s (here one with a backlog to catch up on)', async () => {
      const acme = await registerCompany(closing.http, 'Acme');
      const start = (await closing.http.get('/v1/events').set(acme.auth).expect(200)).body.nextCursor;
      await publishEvents(closing, acme.companyId, 150, { padding: 32 * 1024, oneBatch: true });
      const tailer = closing.app.get(EventTailer);
      const { socket } = await stalledStream(base, `/v1/events/stream?after=${start}`, acme.auth);
      await waitFor(() => tailer.openStreams === 1, { message: 'the stream open' });
      await waitFor(() => tailer.openStreams === 0, { timeoutMs: 15_000, message: 'the stalled stream cut' });
      await connectionEnd(socket);
    });

    it('ends every stream cleanly, refuses new ones with 503, frees their slots, and app.close() does not wait for them', async () => {
      const acme = await registerCompany(closing.http, 'Acme');
      const key = await createApiKey(closing.http, acme, ['events:read']);
      const clientA = await open(base, '/v1/events/stream', acme.auth);
      const clientB = await open(base, '/api/external/events/stream', { 'x-api-key': key });
      const stalled = await stalledStream(base, '/v1/events/stream', (await registerCompany(closing.http, 'Globex')).auth);
      await waitFor(() => closing.app.get(EventTailer).openStreams === 3, { message: 'three streams open' });

      const started = Date.now();
      const shutdown = closing.app.get(EventStreams).beforeApplicationShutdown();
      const refused = await open(base, '/v1/events/stream', acme.auth);
      expect(refused.status).toBe(503);
      expect(JSON.parse(refused.body)).toMatchObject({ status: 503, detail: 'The server is shutting down: connect again' });
      await shutdown;
      expect(await clientA.ended).toBe('end');
      expect(await clientB.ended).toBe('end');
      await connectionEnd(stalled.socket);
      expect(await slotsOf(acme)).toBe(0);

      await closing.close();
      deployment.apps.splice(deployment.apps.indexOf(closing), 1);
      // Bounded by the flush wait (2 s) for the stalled client, not by the streams' lifetime.
      expect(Date.now() - started).toBeLessThan(10_000);
    });
  });
});

describe('the per-principal share of the streams (EVENT_STREAMS_PER_PRINCIPAL)', () => {
  let t: TestApp;
  let base: string;
  const clients = new SseClients();

  beforeAll(async () => {
    t = await createTestApp({ env: { EVENT_STREAMS_PER_COMPANY: '4', EVENT_STREAMS_PER_PRINCIPAL: '2', THROTTLE_LIMIT: '100000' } });
    base = await listen(t.app);
  });
  afterEach(() => clients.closeAll());
  afterAll(() => t.close());

  it('lets one agent or key hold at most its share: one more is a 429 (no slot kept), and the others still connect', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const colleague = await addAgent(t, acme, 'agent');
    const key = await createApiKey(t.http, acme, ['events:read']);
    const slots = () => t.model<EventStreamSlot>(EventStreamSlot.name).find({ companyId: acme.companyId }).lean();
    for (let index = 0; index < 2; index += 1) expect((await clients.open(`${base}/v1/events/stream`, acme.auth)).status).toBe(200);
    const before = await slots();

    const refused = await clients.open(`${base}/v1/events/stream`, acme.auth);
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('10');
    expect(JSON.parse(refused.body)).toMatchObject({ detail: 'At most 2 event streams may be open at once for one agent or API key: close one, or retry later' });
    expect(await slots()).toEqual(before);
    expect(before.map((slot) => slot.principal)).toEqual([`agent:${acme.agentId}`, `agent:${acme.agentId}`]);

    expect((await clients.open(`${base}/v1/events/stream`, colleague.auth)).status).toBe(200);
    expect((await clients.open(`${base}/api/external/events/stream`, { 'x-api-key': key })).status).toBe(200);
    // The company's cap (4) holds too.
    const overCompany = await clients.open(`${base}/api/external/events/stream`, { 'x-api-key': key });
    expect(overCompany.status).toBe(429);
    expect(JSON.parse(overCompany.body)).toEqual({ success: false, error: 'At most 4 event streams may be open at once for a company: close one, or retry later' });
  });
});
