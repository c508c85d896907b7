import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { EventRelay } from '../../src/events/event-relay.js';
import { stageEvent } from '../../src/events/pending-event.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const hex = () => new Types.ObjectId().toHexString();
const executed = () =>
  stageEvent('flow.executed', { execution: { executionId: hex(), flowId: hex(), conversationId: hex(), status: 'completed', steps: [] } });

type ConversationData = { conversation: { id: string }; message?: { id: string } };

/** The relay appends whatever has queued up for a company in one batch: order and numbering hold across batches. */
describe('event relay batches', () => {
  let t: TestApp;
  let acme: TestCompany;
  let key: string;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['messages:write']);
  });
  afterAll(async () => {
    await t.close();
  });

  const logOf = (company: TestCompany) =>
    t.model<LoggedEvent>(LoggedEvent.name).find({ companyId: company.companyId }).sort({ sequence: 1 }).lean();

  it('numbers a burst of concurrent writes without gaps, each event once, every conversation created before its messages', async () => {
    const before = (await logOf(acme)).length;
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        t.http
          .post('/api/external/messages')
          .set('x-api-key', key)
          .send({ from: { phone: `+1415555${String(index % 9).padStart(4, '0')}` }, text: `#${index}` })
          .expect(201),
      ),
    );
    await settle(t);

    const log = (await logOf(acme)).slice(before);
    const messageIds = answers.map((answer) => answer.body.data.message.id as string);
    const received = log.filter((event) => event.type === 'message.received');
    expect(received.map((event) => (event.data as ConversationData).message?.id).sort()).toEqual([...messageIds].sort());
    expect(log.filter((event) => event.type === 'conversation.created')).toHaveLength(9);
    expect(new Set(log.map((event) => event._id)).size).toBe(log.length);
    // Contiguous numbers: no event appended twice (a duplicate would leave its reserved number unused).
    const first = log[0].sequence;
    expect(log.map((event) => event.sequence)).toEqual(log.map((_, index) => first + index));
    const createdAt = new Map(
      log.filter((event) => event.type === 'conversation.created').map((event) => [(event.data as ConversationData).conversation.id, event.sequence]),
    );
    for (const event of received) expect(createdAt.get((event.data as ConversationData).conversation.id)).toBeLessThan(event.sequence);
  });

  it('logs events handed over again after this process logged them once, without using a sequence number for them', async () => {
    const relay = t.app.get(EventRelay);
    const [a, b, c] = [executed(), executed(), executed()];
    await relay.relay(acme.companyId, [{ source: null, docId: null, events: [a] }]);
    // As a write that finds its document's events still pending hands them over with its own.
    await relay.relay(acme.companyId, [
      { source: null, docId: null, events: [a, b] },
      { source: null, docId: null, events: [c] },
    ]);

    const log = (await logOf(acme)).filter((event) => [a.id, b.id, c.id].includes(event._id));
    expect(log.map((event) => event._id)).toEqual([a.id, b.id, c.id]);
    expect(log.map((event) => event.sequence - log[0].sequence)).toEqual([0, 1, 2]);
  });
});
