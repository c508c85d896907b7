import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { publishEvents } from '../support/event-feed.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { SseClients } from '../support/sse-client.js';
import type { TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

const KEEP_ALIVE_MS = 300;

describe('the event stream: GET /v1/events/stream and GET /api/external/events/stream', () => {
  let deployment: Deployment;
  let t: TestApp;
  let other: TestApp;
  const clients = new SseClients();

  beforeAll(async () => {
    deployment = await startDeployment('eventfeed', { EVENT_STREAM_KEEPALIVE_MS: String(KEEP_ALIVE_MS) });
    [t, other] = deployment.apps;
  });
  afterEach(() => clients.closeAll());
  afterAll(() => deployment.stop());

  const open = (path: string, headers: Record<string, string>) => clients.open(deployment.bases[0] + path, headers);
  const stream = (company: TestCompany, query = '', headers: Record<string, string> = {}) =>
    open(`/v1/events/stream${query}`, { ...company.auth, ...headers });
  const ids = (events: { id: string }[]) => events.map((event) => event.id);
  const logIds = async (company: TestCompany, afterSequence = 0) =>
    ids(await t.model<LoggedEvent>(LoggedEvent.name).find({ companyId: company.companyId, sequence: { $gt: afterSequence } }).sort({ sequence: 1 }).lean().then((rows) => rows.map((row) => ({ id: row._id }))));

  it('sends each event logged from now on as `id: <cursor>`, `event: <type>`, `data: <list item>`, with the stream headers', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const before = await publishEvents(t, acme.companyId, 2, { label: 'before' });
    const client = await stream(acme);
    expect(client.status).toBe(200);
    expect(client.headers).toMatchObject({
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
      'x-request-id': expect.any(String),
      'x-ratelimit-limit': expect.any(String),
    });

    const published = await publishEvents(t, acme.companyId, 3, { label: 'after' });
    await client.waitForEvents(3);
    expect(client.events.map((event) => event.event)).toEqual(['flow.executed', 'flow.executed', 'flow.executed']);
    expect(ids(client.data)).toEqual(ids(published));

    // Each frame's data is the list's item, and its id the cursor right after it.
    const listed = await t.http.get('/v1/events').query({ after: client.events[0].id }).set(acme.auth).expect(200);
    expect(listed.body.data).toEqual(client.data.slice(1));
    const fromStart = await t.http.get('/v1/events').set(acme.auth).expect(200);
    expect(fromStart.body.data).toEqual([...fromStart.body.data.slice(0, 2), ...client.data]);
    expect(ids(fromStart.body.data.slice(0, 2))).toEqual(ids(before));
  });

  it('carries the events of real changes, with the ids the log and the webhooks have', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const key = await createApiKey(t.http, acme, ['messages:write']);
    const client = await stream(acme);
    await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { phone: '+14155550123' }, text: 'Hello' }).expect(201);
    const events = await client.waitForEvents(3);
    expect(events.map((event) => event.event)).toEqual(['contact.created', 'conversation.created', 'message.received']);
    expect(ids(client.data)).toEqual(await logIds(acme));
    expect(client.data[2].data).toMatchObject({ message: { text: 'Hello', direction: 'inbound' } });
  });

  it('on Interface B: Interface B names in `event` and `type`, the events:read scope, errors in the envelope', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const reader = await createApiKey(t.http, acme, ['events:read']);
    const writer = await createApiKey(t.http, acme, ['messages:write']);

    const refused = await open('/api/external/events/stream', { 'x-api-key': writer });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toEqual({ success: false, error: 'The API key lacks the scope events:read' });
    expect((await open('/api/external/events/stream', {})).status).toBe(401);
    expect((await open('/v1/events/stream', {})).status).toBe(401);

    const client = await open('/api/external/events/stream?types=conversation.created,CHAT_RECEIVED', { 'x-api-key': reader });
    await t.http.post('/api/external/messages').set('x-api-key', writer).send({ from: { email: 'b@example.test' }, text: 'Hi' }).expect(201);
    await client.waitForEvents(2);
    expect(client.events.map((event) => event.event)).toEqual(['CONVERSATION_CREATED', 'CHAT_RECEIVED']);
    expect(client.data.map((event) => event.type)).toEqual(['CONVERSATION_CREATED', 'CHAT_RECEIVED']);

    const bad = await open('/api/external/events/stream', { 'x-api-key': reader, 'last-event-id': 'garbage' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({ success: false, error: expect.stringContaining('Invalid event cursor') });
  });

  it('keeps to the `types` named', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const client = await stream(acme, '?types=message.sent');
    const publisher = t.app.get(EventPublisher);
    await publishEvents(t, acme.companyId, 2);
    const sent = await publisher.publish(acme.companyId, 'message.sent', { message: { id: 'm' } as never, conversation: { id: 'c' } as never });
    await publishEvents(t, acme.companyId, 2);
    const last = await publisher.publish(acme.companyId, 'message.sent', { message: { id: 'm2' } as never, conversation: { id: 'c' } as never });
    await client.waitForEvents(2);
    expect(ids(client.data)).toEqual([sent.id, last.id]);
  });

  it("never carries another company's event", async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const globex = await registerCompany(t.http, 'Globex');
    const globexKey = await createApiKey(t.http, globex, ['events:read']);
    const acmeStream = await stream(acme);
    const globexStreams = [await stream(globex), await open('/api/external/events/stream', { 'x-api-key': globexKey })];

    const published = { acme: [] as string[], globex: [] as string[] };
    for (let i = 0; i < 6; i++) {
      published.acme.push(...ids(await publishEvents(t, acme.companyId, 1, { label: `acme-${i}` })));
      published.globex.push(...ids(await publishEvents(i % 2 ? other : t, globex.companyId, 1, { label: `globex-${i}` })));
    }
    await acmeStream.waitForEvents(6);
    for (const client of globexStreams) await client.waitForEvents(6);
    expect(ids(acmeStream.data)).toEqual(published.acme);
    expect(acmeStream.data.every((event) => event.companyId === acme.companyId)).toBe(true);
    for (const client of globexStreams) {
      expect(ids(client.data)).toEqual(published.globex);
      expect(client.data.every((event) => event.companyId === globex.companyId)).toBe(true);
    }
  });

  it('resumes after a dropped connection with Last-Event-ID, or `after`, while events keep arriving: nothing skipped, nothing repeated', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const start = (await t.http.get('/v1/events').set(acme.auth).expect(200)).body.nextCursor as string;
    let client = await stream(acme, `?after=${start}`);
    const received: string[] = [];
    // Two processes append, in turns and concurrently, for the whole test.
    const publishing = Promise.all([publishEvents(t, acme.companyId, 40, { label: 'here' }), publishEvents(other, acme.companyId, 40, { label: 'there' })]);

    for (const resume of ['last-event-id', 'after', 'last-event-id']) {
      await client.waitForEvents(5, 10_000);
      client.close();
      received.push(...ids(client.data));
      const cursor = client.lastEventId!;
      client = resume === 'after' ? await stream(acme, `?after=${cursor}`) : await stream(acme, `?after=${start}`, { 'last-event-id': cursor });
    }
    await publishing;
    await waitFor(() => received.length + client.events.length >= 80, { timeoutMs: 10_000, message: 'all 80 events' });
    received.push(...ids(client.data));
    expect(received).toEqual(await logIds(acme));
    expect(new Set(received).size).toBe(80);
  });

  it('answers 400 for a malformed Last-Event-ID and 410 for a cursor older than the events kept, in problem details', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const bad = await stream(acme, '', { 'last-event-id': 'ZTE6MTph' });
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toContain('application/problem+json');
    expect(JSON.parse(bad.body)).toMatchObject({ status: 400, detail: expect.stringContaining('Invalid event cursor') });
    expect((await stream(acme, '?types=nope')).status).toBe(400);

    const events = await publishEvents(t, acme.companyId, 3);
    const cursor = (await t.http.get('/v1/events').query({ limit: 1 }).set(acme.auth).expect(200)).body.nextCursor;
    await t.model<LoggedEvent>(LoggedEvent.name).deleteMany({ companyId: acme.companyId, sequence: { $lte: events[1].sequence } });
    const gone = await stream(acme, '', { 'last-event-id': cursor });
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body)).toMatchObject({ status: 410, detail: expect.stringContaining('no longer kept') });
  });

  it('writes a keep-alive comment whenever the stream has been quiet for EVENT_STREAM_KEEPALIVE_MS', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const client = await stream(acme);
    await waitFor(() => client.comments.length >= 3, { timeoutMs: 10_000, message: 'three keep-alive comments' });
    expect(client.comments.slice(0, 3).map((comment) => comment.text)).toEqual(['keep-alive', 'keep-alive', 'keep-alive']);
    expect(client.events).toEqual([]);
  });
});
