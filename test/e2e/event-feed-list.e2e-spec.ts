import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { encodeEventCursor, companyTag } from '../../src/event-feed/event-cursor.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { EventPublisher } from '../../src/events/event-publisher.js';
import { publishEvents } from '../support/event-feed.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('the event feed list: GET /v1/events and GET /api/external/events', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const list = (company: TestCompany, query: Record<string, string | number> = {}) => t.http.get('/v1/events').query(query).set(company.auth);
  const listB = (key: string, query: Record<string, string | number> = {}) => t.http.get('/api/external/events').query(query).set('x-api-key', key);

  it('pages to the end, oldest first, with a nextCursor that is never null, then continues with the events logged after', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const first = await publishEvents(t, acme.companyId, 5);

    const pages: { data: { id: string }[]; nextCursor: string }[] = [];
    let after: string | undefined;
    for (let i = 0; i < 4; i++) {
      const response = await list(acme, { limit: 2, ...(after ? { after } : {}) }).expect(200);
      pages.push(response.body);
      after = response.body.nextCursor;
      expect(typeof after).toBe('string');
    }
    expect(pages.map((page) => page.data.length)).toEqual([2, 2, 1, 0]);
    expect(pages.flatMap((page) => page.data.map((event) => event.id))).toEqual(first.map((event) => event.id));
    const [event] = pages[0].data as Record<string, unknown>[];
    expect(event).toEqual({
      id: first[0].id,
      type: 'flow.executed',
      sequence: first[0].sequence,
      occurredAt: first[0].occurredAt.toISOString(),
      companyId: acme.companyId,
      data: { execution: expect.objectContaining({ executionId: 'run-0' }) },
    });

    // Caught up: the same cursor keeps working, and picks up what is logged next.
    await list(acme, { after: after! }).expect(200, { data: [], nextCursor: after });
    const later = await publishEvents(t, acme.companyId, 3, { label: 'later' });
    const next = await list(acme, { after: after!, limit: 100 }).expect(200);
    expect(next.body.data.map((e: { id: string }) => e.id)).toEqual(later.map((e) => e.id));
    await list(acme, { after: next.body.nextCursor }).expect(200, { data: [], nextCursor: next.body.nextCursor });
  });

  it('starts at the oldest event kept without `after`, 50 to a page by default', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const events = await publishEvents(t, acme.companyId, 52);
    const page = await list(acme).expect(200);
    expect(page.body.data.map((e: { id: string }) => e.id)).toEqual(events.slice(0, 50).map((e) => e.id));
    const rest = await list(acme, { after: page.body.nextCursor }).expect(200);
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual(events.slice(50).map((e) => e.id));
  });

  it('keeps only the `types` named, dotted and Interface B names mixed; the cursor moves past the others', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const publisher = t.app.get(EventPublisher);
    const closed = await publisher.publish(acme.companyId, 'conversation.closed', { conversation: { id: 'c1' } as never, reason: null });
    await publishEvents(t, acme.companyId, 2);
    const sent = await publisher.publish(acme.companyId, 'message.sent', { message: { id: 'm1' } as never, conversation: { id: 'c1' } as never });
    await publishEvents(t, acme.companyId, 2);

    const filtered = await list(acme, { types: 'conversation.closed,CHAT_SENT' }).expect(200);
    expect(filtered.body.data.map((e: { id: string; type: string }) => [e.id, e.type])).toEqual([
      [closed.id, 'conversation.closed'],
      [sent.id, 'message.sent'],
    ]);
    // Past the two flow.executed events at the end as well: nothing more to read of these types.
    await list(acme, { types: 'message.sent', after: filtered.body.nextCursor }).expect(200, { data: [], nextCursor: filtered.body.nextCursor });
    const repeated = await t.http.get('/v1/events?types=CHAT_SENT&types=conversation.closed').set(acme.auth).expect(200);
    expect(repeated.body.data).toHaveLength(2);
  });

  it('on Interface B: the envelope, Interface B names, the events:read scope; cursors work across the two interfaces', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const key = await createApiKey(t.http, acme, ['events:read']);
    const events = await publishEvents(t, acme.companyId, 3);

    const page = await listB(key, { limit: 2, types: 'FLOW_EXECUTED' }).expect(200);
    expect(page.body).toEqual({ success: true, data: expect.any(Array), nextCursor: expect.any(String) });
    expect(page.body.data.map((e: { id: string; type: string }) => [e.id, e.type])).toEqual(events.slice(0, 2).map((e) => [e.id, 'FLOW_EXECUTED']));
    const rest = await list(acme, { after: page.body.nextCursor }).expect(200);
    expect(rest.body.data.map((e: { id: string }) => e.id)).toEqual([events[2].id]);

    const writer = await createApiKey(t.http, acme, ['messages:write', 'webhooks:manage']);
    const forbidden = await listB(writer).expect(403);
    expect(forbidden.body).toEqual({ success: false, error: 'The API key lacks the scope events:read' });
    await t.http.get('/api/external/events').expect(401, { success: false, error: 'Missing API key (x-api-key header)' });
    await t.http.get('/v1/events').expect(401);
  });

  it('answers 400 for a malformed cursor, another company\'s, one ahead of the log, unknown types and a limit outside 1..100', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const globex = await registerCompany(t.http, 'Globex');
    const key = await createApiKey(t.http, acme, ['events:read']);
    await publishEvents(t, acme.companyId, 2);
    await publishEvents(t, globex.companyId, 2);
    const globexCursor = (await list(globex, { limit: 1 }).expect(200)).body.nextCursor;
    const acmeCursor = (await list(acme, { limit: 1 }).expect(200)).body.nextCursor;

    const cases: [Record<string, string | number>, string][] = [
      [{ after: 'not-a-cursor' }, 'Invalid event cursor'],
      [{ after: `${acmeCursor}!` }, 'Invalid event cursor'],
      [{ after: Buffer.from('c1.6650f0c2a1b2c3d4e5f60718').toString('base64url') }, 'Invalid event cursor'],
      [{ after: globexCursor }, "not from your company's event feed"],
      [{ after: encodeEventCursor(3, companyTag(acme.companyId)) }, 'ahead of'],
      [{ types: 'message.created' }, 'each value in types must be one of the following values'],
      [{ types: 'message.received,' }, 'each value in types must be one of the following values'],
      [{ limit: 0 }, 'limit must not be less than 1'],
      [{ limit: 101 }, 'limit must not be greater than 100'],
    ];
    for (const [query, message] of cases) {
      const problem = await list(acme, query).expect(400);
      expect(problem.headers['content-type']).toContain('application/problem+json');
      expect(problem.body).toMatchObject({ status: 400, detail: expect.stringContaining(message) });
      const envelope = await listB(key, query).expect(400);
      expect(envelope.body).toEqual({ success: false, error: expect.stringContaining(message) });
    }
    await list(acme, { 'types[$ne]': 'x' }).expect(400);
  });

  it('answers 410 once events after the cursor are no longer kept, and keeps a cursor at the oldest kept or at the end valid', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const key = await createApiKey(t.http, acme, ['events:read']);
    const events = await publishEvents(t, acme.companyId, 4);
    const cursors: string[] = [];
    let after: string | undefined;
    for (let i = 0; i < 4; i++) {
      after = (await list(acme, { limit: 1, ...(after ? { after } : {}) }).expect(200)).body.nextCursor;
      cursors.push(after!);
    }
    // The TTL monitor removes the two oldest (EVENT_RETENTION_DAYS after they occurred).
    await t.model<LoggedEvent>(LoggedEvent.name).deleteMany({ companyId: acme.companyId, sequence: { $lte: events[1].sequence } });

    const gone = await list(acme, { after: cursors[0] }).expect(410);
    expect(gone.headers['content-type']).toContain('application/problem+json');
    expect(gone.body).toMatchObject({ status: 410, title: 'Gone', detail: expect.stringContaining('no longer kept') });
    expect((await listB(key, { after: cursors[0] }).expect(410)).body).toEqual({ success: false, error: expect.stringContaining('no longer kept') });

    // After the second event: the third, the oldest kept, comes next. Nothing is missing.
    const resumed = await list(acme, { after: cursors[1] }).expect(200);
    expect(resumed.body.data.map((e: { id: string }) => e.id)).toEqual([events[2].id, events[3].id]);
    // Without a cursor: from the oldest kept.
    expect((await list(acme).expect(200)).body.data.map((e: { id: string }) => e.id)).toEqual([events[2].id, events[3].id]);

    // Every event gone: a cursor at the end of the log missed nothing; one before it did.
    await t.model<LoggedEvent>(LoggedEvent.name).deleteMany({ companyId: acme.companyId });
    await list(acme, { after: cursors[3] }).expect(200, { data: [], nextCursor: cursors[3] });
    await list(acme, { after: cursors[2] }).expect(410);
  });

  it("shows a company only its own events", async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const globex = await registerCompany(t.http, 'Globex');
    const acmeEvents = await publishEvents(t, acme.companyId, 3);
    const globexEvents = await publishEvents(t, globex.companyId, 2);
    const ids = (await list(globex).expect(200)).body.data.map((e: { id: string; companyId: string }) => (expect(e.companyId).toBe(globex.companyId), e.id));
    expect(ids).toEqual(globexEvents.map((e) => e.id));
    expect(ids).not.toEqual(expect.arrayContaining([acmeEvents[0].id]));
  });

  it('is described in the OpenAPI document: both lists, both streams with their media type, and the events:read scope', async () => {
    const document = (await t.http.get('/docs-json').expect(200)).body;
    for (const path of ['/v1/events', '/api/external/events']) {
      expect(Object.keys(document.paths[path].get.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '410', '429']));
      expect(document.paths[path].get.parameters.map((parameter: { name: string }) => parameter.name).sort()).toEqual(['after', 'limit', 'types']);
    }
    for (const path of ['/v1/events/stream', '/api/external/events/stream']) {
      const operation = document.paths[path].get;
      expect(Object.keys(operation.responses['200'].content)).toEqual(['text/event-stream']);
      expect(operation.responses['200'].content['text/event-stream'].example).toMatch(/^id: .+\nevent: .+\ndata: \{.+\}\n\n: keep-alive\n\n$/);
      expect(operation.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Last-Event-ID', in: 'header' })]));
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['400', '401', '410', '429']));
    }
    expect(document.paths['/api/external/events/stream'].get.responses['403']).toBeDefined();
    expect(JSON.stringify(document.components.schemas.CreateApiKeyDto)).toContain('events:read');
  });
});
