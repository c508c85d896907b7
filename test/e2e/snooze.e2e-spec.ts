import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import { SNOOZE_TIMER } from '../../src/conversations/snooze/conversation-snoozes.js';
import { sleptMs } from '../../src/conversations/snooze/sleep.js';
import type { AnyDomainEvent } from '../../src/events/domain-events.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { EventRelay } from '../../src/events/event-relay.js';
import { DurableTimers } from '../../src/lanes/durable-timers.js';
import { LaneStore } from '../../src/lanes/lane-store.js';
import { asSnapshot } from '../support/conversations.js';
import { EventRecorder, loggedEvent, settle as settleReactions } from '../support/event-log.js';
import { addAgent, createApiKey, registerCompany, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
/** Long enough for a due timer to have fired if it was going to (the worker polls every 250 ms). */
const pause = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));

/** Snooze (contract section 15): a durable wake-up at `until`, or earlier by the contact, an agent or a close. */
describe('snooze', () => {
  const clock = new TestClock();
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let key: string;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    key = await createApiKey(t.http, acme, ['messages:write']);
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(() => t.close());

  const later = (ms: number) => new Date(clock.now().getTime() + ms);
  const stored = (company: TestCompany, id: string) => t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean();
  const timerDue = (company: TestCompany, id: string) => t.app.get(DurableTimers).dueAt(company.companyId, SNOOZE_TIMER, id);
  const snooze = (company: TestCompany, id: string, until: Date | string, auth = company.auth) =>
    t.http.post(`/v1/conversations/${id}/snooze`).set(auth).send({ until: until instanceof Date ? until.toISOString() : until });
  const unsnoozedEvents = async (company: TestCompany, id: string) => {
    await t.app.get(EventRelay).idle();
    return t.model<LoggedEvent>(LoggedEvent.name).find({ companyId: company.companyId, type: 'conversation.unsnoozed', 'data.conversation.id': id }).lean<LoggedEvent[]>();
  };
  /** The events logged since the test began about this conversation (timers of earlier tests fire as the clock moves). */
  const eventsOf = async (id: string): Promise<AnyDomainEvent[]> =>
    (await recorder.events()).filter((event) => (event.data as { conversation?: { id: string } }).conversation?.id === id);
  const awake = (company: TestCompany, id: string) =>
    waitFor(async () => (await stored(company, id))?.snoozedUntil === null, { message: `conversation ${id} to wake` });

  /** A conversation of `company` with a contact of its own (by e-mail, on the api channel), moved to `status`. */
  async function conversationIn(company: TestCompany, status: 'bot' | 'queued' | 'human' = 'human'): Promise<{ id: string; email: string }> {
    const email = uniqueEmail('contact');
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(company.companyId, { email, name: 'Grace' });
    const { body } = await t.http.post('/v1/conversations').set(company.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    if (status === 'queued') await t.http.patch(`/v1/conversations/${body.id}`).set(company.auth).send({ status: 'queued' }).expect(200);
    if (status === 'human') await t.http.post(`/v1/conversations/${body.id}/assign`).set(company.auth).send({ agentId: company.agentId }).expect(200);
    await recorder.clear();
    return { id: body.id, email };
  }

  describe('POST /v1/conversations/:id/snooze', () => {
    it('snoozes a human conversation until `until` (status unchanged), with conversation.snoozed and a durable timer', async () => {
      const { id } = await conversationIn(acme, 'human');
      const until = later(30 * MINUTE);
      const response = await snooze(acme, id, until).expect(200);
      expect(response.body).toMatchObject({ id, status: 'human', assignedAgentId: acme.agentId, snoozedUntil: until.toISOString(), contact: { name: 'Grace' } });
      const record = await stored(acme, id);
      expect(record?.snoozedUntil).toEqual(until);
      expect(record?.sleep).toEqual({ since: expect.any(Date), past: [], folded: null });
      expect(await timerDue(acme, id)).toEqual(until);
      expect(await eventsOf(id)).toEqual([
        loggedEvent('conversation.snoozed', acme.companyId, new Date(response.body.updatedAt), { conversation: asSnapshot(response.body) }),
      ]);
      const read = await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200);
      expect(read.body.snoozedUntil).toBe(until.toISOString());
    });

    it('snoozes a queued conversation, and lets any agent snooze', async () => {
      const { id } = await conversationIn(acme, 'queued');
      const agent = await addAgent(t, acme, 'agent');
      const until = later(DAY);
      const response = await snooze(acme, id, until, agent.auth).expect(200);
      expect(response.body).toMatchObject({ status: 'queued', snoozedUntil: until.toISOString() });
    });

    it.each([
      ['in the past', () => later(-MINUTE).toISOString(), 'until must be in the future'],
      ['now', () => clock.now().toISOString(), 'until must be in the future'],
      ['more than 90 days ahead', () => later(90 * DAY + MINUTE).toISOString(), 'until must be at most 90 days from now'],
      ['not a time', () => 'tomorrow', 'until must be an ISO-8601 time with a zone (or a date), or epoch milliseconds'],
      ['without a zone', () => '2099-01-01T10:00:00', 'until must be an ISO-8601 time with a zone (or a date), or epoch milliseconds'],
      ['missing', () => undefined, 'until must be an ISO-8601 time with a zone (or a date), or epoch milliseconds'],
    ])('refuses an until %s with a 400 naming it, storing nothing', async (_, until, message) => {
      const { id } = await conversationIn(acme, 'human');
      const response = await t.http.post(`/v1/conversations/${id}/snooze`).set(acme.auth).send({ until: until() }).expect(400);
      expect(response.body.errors).toEqual([{ field: 'until', message }]);
      expect((await stored(acme, id))?.snoozedUntil).toBeNull();
      expect(await timerDue(acme, id)).toBeNull();
      expect(await eventsOf(id)).toEqual([]);
    });

    it('accepts exactly 90 days ahead', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(90 * DAY - 1000)).expect(200);
    });

    it.each(['bot', 'closed'] as const)('refuses a %s conversation with a 400, storing nothing', async (status) => {
      const { id } = await conversationIn(acme, 'bot');
      if (status === 'closed') await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}).expect(200);
      await recorder.clear();
      const response = await snooze(acme, id, later(MINUTE)).expect(400);
      expect(response.body.detail).toBe(`Only human or queued conversations can be snoozed; this one is ${status}`);
      expect(await timerDue(acme, id)).toBeNull();
      expect(await eventsOf(id)).toEqual([]);
    });

    it("answers 404 for another company's conversation (or a malformed id), and sets nothing", async () => {
      const { id } = await conversationIn(globex, 'human');
      await snooze(acme, id, later(MINUTE)).expect(404);
      await snooze(acme, 'nope', later(MINUTE)).expect(404);
      expect((await stored(globex, id))?.snoozedUntil).toBeNull();
      expect(await timerDue(globex, id)).toBeNull();
      expect(await timerDue(acme, id)).toBeNull();
    });

    it('refuses unknown fields', async () => {
      const { id } = await conversationIn(acme, 'human');
      const response = await t.http.post(`/v1/conversations/${id}/snooze`).set(acme.auth).send({ until: later(MINUTE).toISOString(), reason: 'x' }).expect(400);
      expect(response.body.errors).toEqual([{ field: 'reason', message: 'reason is not a field of this body' }]);
    });
  });

  describe('waking at until (the durable timer)', () => {
    it('wakes once, within seconds of until and not before, with conversation.unsnoozed (reason timer)', async () => {
      const { id } = await conversationIn(acme, 'human');
      const until = later(10 * MINUTE);
      await snooze(acme, id, until).expect(200);
      clock.advance(10 * MINUTE - 5000);
      await pause();
      expect((await stored(acme, id))?.snoozedUntil).toEqual(until);

      clock.advance(5000);
      await awake(acme, id);
      const events = await eventsOf(id);
      expect(events.map((event) => event.type)).toEqual(['conversation.snoozed', 'conversation.unsnoozed']);
      expect(events[1].data).toEqual({ conversation: expect.objectContaining({ id, status: 'human', snoozedUntil: null }), reason: 'timer' });
      await waitFor(async () => (await timerDue(acme, id)) === null, { message: 'the timer to be removed' });
      const record = await stored(acme, id);
      // The sleep ended at until, whenever the timer ran; service levels leave it out of their clocks.
      expect(record?.sleep?.since).toBeNull();
      expect(record?.sleep?.past).toEqual([{ from: expect.any(Date), to: until }]);
      const from = record!.sleep!.past[0].from;
      expect(sleptMs(record!.sleep, new Date(from.getTime() - MINUTE), new Date(until.getTime() + MINUTE))).toBe(until.getTime() - from.getTime());
      await pause();
      expect(await unsnoozedEvents(acme, id)).toHaveLength(1);
    });

    it('snoozed again later: the old time passes without waking it, the new one wakes it once', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(5 * MINUTE)).expect(200);
      const moved = later(20 * MINUTE);
      const response = await snooze(acme, id, moved).expect(200);
      expect(response.body.snoozedUntil).toBe(moved.toISOString());

      clock.advance(6 * MINUTE);
      // The timer fires at the old time, finds the conversation not due, and sets itself for the new one.
      await waitFor(async () => (await timerDue(acme, id))?.getTime() === moved.getTime(), { message: 'the timer to move to the new time' });
      expect((await stored(acme, id))?.snoozedUntil).toEqual(moved);
      clock.advance(14 * MINUTE);
      await awake(acme, id);
      expect((await eventsOf(id)).map((event) => event.type)).toEqual(['conversation.snoozed', 'conversation.snoozed', 'conversation.unsnoozed']);
      // One sleep, from the first snooze to the new time.
      expect((await stored(acme, id))?.sleep?.past).toEqual([{ from: expect.any(Date), to: moved }]);
    });

    it('snoozed again earlier: wakes at the earlier time', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(60 * MINUTE)).expect(200);
      const earlier = later(5 * MINUTE);
      await snooze(acme, id, earlier).expect(200);
      expect(await timerDue(acme, id)).toEqual(earlier);
      clock.advance(5 * MINUTE);
      await awake(acme, id);
      expect(await unsnoozedEvents(acme, id)).toHaveLength(1);
    });

    it('the same until again changes nothing and emits nothing', async () => {
      const { id } = await conversationIn(acme, 'human');
      const until = later(5 * MINUTE);
      const first = await snooze(acme, id, until).expect(200);
      const again = await snooze(acme, id, until).expect(200);
      expect(again.body.updatedAt).toBe(first.body.updatedAt);
      expect((await eventsOf(id)).map((event) => event.type)).toEqual(['conversation.snoozed']);
    });
  });

  describe('waking early', () => {
    it("the contact's message wakes it before the message is stored: unsnoozed (contact_message), then message.received", async () => {
      const { id, email } = await conversationIn(acme, 'human');
      const until = later(30 * MINUTE);
      await snooze(acme, id, until).expect(200);
      await recorder.clear();
      const inbound = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { email }, text: 'Any news?' }).expect(201);
      expect(inbound.body.data.conversation).toMatchObject({ id, snoozedUntil: null, status: 'human' });
      const record = await stored(acme, id);
      expect(record?.snoozedUntil).toBeNull();
      expect(record?.sleep).toMatchObject({ since: null, past: [{ from: expect.any(Date), to: expect.any(Date) }] });
      const events = await eventsOf(id);
      expect(events.map((event) => event.type)).toEqual(['conversation.unsnoozed', 'message.received']);
      expect(events[0].data).toMatchObject({ reason: 'contact_message', conversation: { id, snoozedUntil: null } });
      expect(events[0].sequence).toBeLessThan(events[1].sequence);
      expect(events[1].data).toMatchObject({ conversation: { snoozedUntil: null } });

      // The timer still falls due, finds it awake, and does nothing.
      clock.advance(30 * MINUTE);
      await waitFor(async () => (await timerDue(acme, id)) === null, { message: 'the timer to fire and go' });
      expect(await unsnoozedEvents(acme, id)).toHaveLength(1);
    });

    it('an agent reply or a note does not wake it', async () => {
      const { id } = await conversationIn(acme, 'human');
      const until = later(30 * MINUTE);
      await snooze(acme, id, until).expect(200);
      await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'We are still looking' }).expect(201);
      await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'Ask billing', private: true }).expect(201);
      expect((await stored(acme, id))?.snoozedUntil).toEqual(until);
    });

    it('POST /unsnooze wakes it now (reason agent); an awake conversation is answered as it is, with no event', async () => {
      const { id } = await conversationIn(acme, 'queued');
      await snooze(acme, id, later(30 * MINUTE)).expect(200);
      await recorder.clear();
      const agent = await addAgent(t, acme, 'agent');
      const response = await t.http.post(`/v1/conversations/${id}/unsnooze`).set(agent.auth).expect(200);
      expect(response.body).toMatchObject({ id, status: 'queued', snoozedUntil: null, contact: { name: 'Grace' } });
      const again = await t.http.post(`/v1/conversations/${id}/unsnooze`).set(acme.auth).expect(200);
      expect(again.body.updatedAt).toBe(response.body.updatedAt);
      expect(await eventsOf(id)).toEqual([
        loggedEvent('conversation.unsnoozed', acme.companyId, new Date(response.body.updatedAt), { conversation: asSnapshot(response.body), reason: 'agent' }),
      ]);
      await t.http.post(`/v1/conversations/${id}/unsnooze`).set(globex.auth).expect(404);
    });

    it('closing clears the snooze, without conversation.unsnoozed, and the timer then finds nothing to do', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(5 * MINUTE)).expect(200);
      await recorder.clear();
      const closed = await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({ reason: 'done' }).expect(200);
      expect(closed.body).toMatchObject({ status: 'closed', snoozedUntil: null });
      expect((await stored(acme, id))?.sleep).toMatchObject({ since: null, past: [{ from: expect.any(Date), to: expect.any(Date) }] });
      clock.advance(5 * MINUTE);
      await waitFor(async () => (await timerDue(acme, id)) === null, { message: 'the timer to fire and go' });
      expect((await eventsOf(id)).map((event) => event.type)).toEqual(['conversation.closed']);
    });
  });

  it('auto-assignment leaves a snoozed queued conversation in the queue, and takes it when it wakes', async () => {
    const team = await registerCompany(t.http, 'Team');
    await t.http.patch(`/v1/agents/${team.agentId}`).set(team.auth).send({ status: 'offline' }).expect(200);
    const online = await addAgent(t, team, 'agent');
    const { id } = await conversationIn(team, 'queued');
    await snooze(team, id, later(10 * MINUTE)).expect(200);
    await t.http.patch('/v1/settings').set(team.auth).send({ autoAssignment: { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 5 } }).expect(200);
    await settleReactions(t);
    expect(await stored(team, id)).toMatchObject({ status: 'queued', assignedAgentId: null });

    clock.advance(10 * MINUTE);
    await waitFor(async () => (await stored(team, id))?.status === 'human', { message: 'the woken conversation to be assigned' });
    expect((await stored(team, id))?.assignedAgentId?.toHexString()).toBe(online.agentId);
  });

  describe('stopped between its steps', () => {
    /** The next change of this conversation fails, as if its process died just before writing it. */
    function failOnce(id: string): { count: number } {
      const conversations = t.app.get(ConversationsService);
      const change = conversations.change.bind(conversations);
      const failed = { count: 0 };
      jest.spyOn(conversations, 'change').mockImplementation(async (companyId, current, plan) => {
        if (current._id.toHexString() === id && failed.count === 0) {
          failed.count += 1;
          throw new Error('process killed');
        }
        return change(companyId, current, plan);
      });
      return failed;
    }

    it('a firing stopped after waking, before the timer is removed: fires again, wakes nothing twice', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(MINUTE)).expect(200);
      const remove = LaneStore.prototype.remove;
      let failed = 0;
      jest.spyOn(LaneStore.prototype, 'remove').mockImplementation(async function (this: LaneStore<never>, lane) {
        if (String(lane._id) === `${SNOOZE_TIMER}:${id}` && failed === 0) {
          failed += 1;
          throw new Error('process killed');
        }
        return remove.call(this, lane);
      });
      clock.advance(MINUTE);
      await awake(acme, id);
      await waitFor(() => failed === 1, { message: 'the removal that fails' });
      await pause();
      expect(await timerDue(acme, id)).not.toBeNull();

      clock.advance(MINUTE);
      await waitFor(async () => (await timerDue(acme, id)) === null, { message: 'the timer to fire again and go' });
      expect(await unsnoozedEvents(acme, id)).toHaveLength(1);
    });

    it('a firing stopped before its write: retried, wakes once', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(MINUTE)).expect(200);
      const failed = failOnce(id);
      clock.advance(MINUTE);
      await waitFor(() => failed.count === 1, { message: 'the failed firing' });
      await pause();
      expect((await stored(acme, id))?.snoozedUntil).not.toBeNull();
      clock.advance(MINUTE);
      await awake(acme, id);
      await pause();
      expect(await unsnoozedEvents(acme, id)).toHaveLength(1);
    });

    it('a snooze stopped after setting its timer, before writing the conversation: the timer finds nothing to do', async () => {
      const { id } = await conversationIn(acme, 'human');
      const failed = failOnce(id);
      await snooze(acme, id, later(MINUTE)).expect(500);
      expect(failed.count).toBe(1);
      expect(await timerDue(acme, id)).not.toBeNull();
      clock.advance(MINUTE);
      await waitFor(async () => (await timerDue(acme, id)) === null, { message: 'the timer to fire and go' });
      expect((await stored(acme, id))?.snoozedUntil).toBeNull();
      expect(await eventsOf(id)).toEqual([]);
    });

    it('a snooze moved later, stopped after writing the conversation: the timer fires early, sets itself again, wakes on time', async () => {
      const { id } = await conversationIn(acme, 'human');
      await snooze(acme, id, later(5 * MINUTE)).expect(200);
      const timers = t.app.get(DurableTimers);
      const setNoLaterThan = timers.setNoLaterThan.bind(timers);
      let calls = 0;
      jest.spyOn(timers, 'setNoLaterThan').mockImplementation(async (...args) => {
        calls += 1;
        if (calls === 2) throw new Error('process killed');
        return setNoLaterThan(...args);
      });
      const moved = later(15 * MINUTE);
      await snooze(acme, id, moved).expect(500);
      expect((await stored(acme, id))?.snoozedUntil).toEqual(moved);

      clock.advance(5 * MINUTE);
      await waitFor(async () => (await timerDue(acme, id))?.getTime() === moved.getTime(), { message: 'the timer to set itself again' });
      expect((await stored(acme, id))?.snoozedUntil).toEqual(moved);
      clock.advance(10 * MINUTE);
      await awake(acme, id);
      expect(await unsnoozedEvents(acme, id)).toHaveLength(1);
    });
  });
});

describe('snooze wake-ups in two API processes on one database', () => {
  let deployment: Deployment;
  let a: TestApp;
  let b: TestApp;
  const clock = new TestClock();

  beforeAll(async () => {
    deployment = await startDeployment('snoozes', { THROTTLE_LIMIT: '100000' }, 2, clock);
    [a, b] = deployment.apps;
  });
  afterAll(() => deployment.stop());

  it('wakes each conversation exactly once, by its timer or by its contact, whichever comes first', async () => {
    const acme = await registerCompany(a.http, 'Two processes');
    const key = await createApiKey(a.http, acme, ['messages:write']);
    const until = new Date(clock.now().getTime() + MINUTE).toISOString();
    const conversations: { id: string; email: string }[] = [];
    for (let index = 0; index < 24; index += 1) {
      const app = index % 2 ? a : b;
      const email = uniqueEmail('contact');
      const contact = await app.app.get(ContactIdentities).findOrCreateByIdentity(acme.companyId, { email });
      const { body } = await app.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact._id.toHexString() }).expect(201);
      await app.http.post(`/v1/conversations/${body.id}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
      await app.http.post(`/v1/conversations/${body.id}/snooze`).set(acme.auth).send({ until }).expect(200);
      conversations.push({ id: body.id, email });
    }
    clock.advance(MINUTE);
    // Every fourth contact writes while the timers fire, through either process.
    await Promise.all(
      conversations
        .filter((_, index) => index % 4 === 0)
        .map(({ email }, index) => (index % 2 ? a : b).http.post('/api/external/messages').set('x-api-key', key).send({ from: { email }, text: 'Hello?' }).expect(201)),
    );
    const ids = conversations.map(({ id }) => id);
    const model = a.model<Conversation>(Conversation.name);
    await waitFor(async () => (await model.countDocuments({ companyId: acme.companyId, _id: { $in: ids }, snoozedUntil: null })) === ids.length, {
      timeoutMs: 15_000,
      message: 'every conversation to wake',
    });
    await settleReactions(a, b);
    await pause();
    const logged = await a.model<LoggedEvent>(LoggedEvent.name).find({ companyId: acme.companyId, type: 'conversation.unsnoozed' }).lean<LoggedEvent[]>();
    const perConversation = new Map<string, string[]>();
    for (const event of logged) {
      const data = event.data as { conversation: { id: string }; reason: string };
      perConversation.set(data.conversation.id, [...(perConversation.get(data.conversation.id) ?? []), data.reason]);
    }
    expect([...perConversation.keys()].sort()).toEqual([...ids].sort());
    expect([...perConversation.values()].filter((reasons) => reasons.length !== 1)).toEqual([]);
    expect(new Set([...perConversation.values()].flat())).toEqual(new Set(['timer', 'contact_message']));
  });
});
