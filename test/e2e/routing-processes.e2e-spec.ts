import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { Types } from 'mongoose';
import request from 'supertest';
import { Agent } from '../../src/agents/agent.schema.js';
import { QUEUE_TIMEOUT } from '../../src/assignment/queue-timeouts.js';
import { Contact } from '../../src/contacts/contact.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { settle } from '../support/event-log.js';
import { registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import type { TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

/**
 * The issue's proof (500 conversations to 20 agents; 480 here, twice the agents' room): conversations queued
 * concurrently through two processes, one killed with `kill -9` halfway. The agents have room for half of them, so a
 * backlog waits until they close what they hold.
 */
const AGENTS = 20;
const CAPACITY = 12;
const CONVERSATIONS = 2 * AGENTS * CAPACITY;
/** Requests in flight to each process while queueing. */
const CONCURRENCY = 8;
/** The routing consumer's lease (event-consumers.ts): what a lane the killed process held waits before another takes it. */
const CONSUMER_LEASE_MS = 60_000;

describe('routing across two processes, one killed', () => {
  // The survivor's clock: moved past the killed process's leases instead of waiting for them.
  const clock = new TestClock();
  let deployment: Deployment;
  let survivor: TestApp;

  beforeAll(async () => {
    deployment = await startDeployment('routingprocesses', { THROTTLE_LIMIT: '1000000' }, 1, clock);
    survivor = deployment.apps[0];
  });
  afterAll(async () => {
    await deployment.stop();
  });

  it('never exceeds a capacity nor assigns twice, and assigns every conversation once agents have room', async () => {
    // Started alone: a process's start-up (~9 s) slows down a lot on a busy machine when it competes with the set-up.
    const victim = await deployment.spawn({ THROTTLE_LIMIT: '1000000' });
    const company = await registerCompany(survivor.http, 'Busy desk');
    await survivor.http.patch(`/v1/agents/${company.agentId}`).set(company.auth).send({ status: 'offline' }).expect(200);
    await survivor.http
      .patch('/v1/settings')
      .set(company.auth)
      .send({ autoAssignment: { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 100 } })
      .expect(200);
    const agentIds = await Promise.all(
      Array.from({ length: AGENTS }, async (_, n) => {
        const { body } = await survivor.http
          .post('/v1/agents')
          .set(company.auth)
          .send({ name: `Agent ${n}`, email: uniqueEmail('agent'), role: 'agent', status: 'online' })
          .expect(201);
        await survivor.http.patch(`/v1/agents/${body.id}`).set(company.auth).send({ capacity: CAPACITY }).expect(200);
        return body.id as string;
      }),
    );
    const ids = await openConversations(survivor, company, CONVERSATIONS);

    const conversations = survivor.model<Conversation>(Conversation.name);
    const countWith = (status: Conversation['status']) => conversations.countDocuments({ companyId: company.companyId, status });
    const agents = () =>
      survivor
        .model<Agent>(Agent.name)
        .find({ companyId: company.companyId, _id: { $in: agentIds } })
        .lean();

    // Queued through both processes at once, alternately; the spawned one is killed with SIGKILL halfway.
    const failedOnVictim: string[] = [];
    const queue = (http: () => request.Agent | ReturnType<typeof request>, id: string) =>
      http().patch(`/v1/conversations/${id}`).set(company.auth).send({ status: 'queued' });
    const victimHttp = () => request(victim.base);
    let killed = false;
    const sendAll = async (part: string[], http: typeof victimHttp | (() => TestApp['http']), onVictim: boolean) => {
      let next = 0;
      const worker = async () => {
        while (next < part.length) {
          const id = part[next++];
          if (onVictim && killed) {
            failedOnVictim.push(id);
            continue;
          }
          try {
            const response = await queue(http, id);
            expect(response.status).toBe(200);
          } catch (error) {
            if (!onVictim || !killed) throw error;
            failedOnVictim.push(id);
          }
        }
      };
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    };
    const both = (part: string[]) =>
      Promise.all([
        sendAll(
          part.filter((_, n) => n % 2 === 0),
          () => survivor.http,
          false,
        ),
        sendAll(
          part.filter((_, n) => n % 2 === 1),
          victimHttp,
          true,
        ),
      ]);
    // The first half queued; once routing has assigned one, the second half, the kill landing halfway through it.
    await both(ids.slice(0, CONVERSATIONS / 2));
    await waitFor(async () => (await countWith('human')) > 0, { timeoutMs: 60_000, intervalMs: 50, message: 'routing to start' });
    let atKill = { human: 0, queued: 0, untouched: 0 };
    const killer = (async () => {
      await waitFor(async () => (await countWith('bot')) <= (CONVERSATIONS * 3) / 8, {
        timeoutMs: 60_000,
        intervalMs: 10,
        message: 'more to be queued',
      });
      killed = true;
      await victim.kill();
      atKill = { human: await countWith('human'), queued: await countWith('queued'), untouched: await countWith('bot') };
    })();
    await Promise.all([both(ids.slice(CONVERSATIONS / 2)), killer]);
    // Killed mid-operation: some conversations routed, some still to be queued.
    expect(atKill.human).toBeGreaterThan(0);
    expect(atKill.untouched).toBeGreaterThan(0);
    // What the killed process did not take (its write may have landed before the kill): queued through the survivor.
    for (const id of failedOnVictim) {
      if ((await conversations.findOne({ _id: id, companyId: company.companyId }, { status: 1 }).lean())!.status !== 'bot') continue;
      await queue(() => survivor.http, id).expect(200);
    }
    expect(await countWith('bot')).toBe(0);
    // Whatever lane the killed process held (routing, relay, a timer) is the survivor's once its lease is over.
    clock.advance(CONSUMER_LEASE_MS + 1000);

    // Phase 1: the agents fill up; the rest waits.
    const firstRoom = AGENTS * CAPACITY;
    await waitFor(async () => (await countWith('human')) >= firstRoom, { timeoutMs: 60_000, intervalMs: 100, message: 'the agents to be full' });
    await settle(survivor);
    expect(await countWith('human')).toBe(firstRoom);
    expect(await countWith('queued')).toBe(CONVERSATIONS - firstRoom);
    const full = await agents();
    expect(full.map((agent) => agent.loadTotal)).toEqual(agentIds.map(() => CAPACITY));
    expect(full.every((agent) => agent.held.length === CAPACITY)).toBe(true);

    // Phase 2: the agents close what they hold; the backlog takes the room.
    const first = await conversations.find({ companyId: company.companyId, status: 'human' }, { _id: 1 }).lean();
    await Promise.all(
      first.map(({ _id }) =>
        survivor.http
          .post(`/v1/conversations/${String(_id)}/close`)
          .set(company.auth)
          .send({})
          .expect(200),
      ),
    );
    await waitFor(async () => (await countWith('queued')) === 0, { timeoutMs: 60_000, intervalMs: 100, message: 'the backlog to drain' });
    await settle(survivor);
    expect(await countWith('human')).toBe(CONVERSATIONS - firstRoom);

    // Every conversation assigned exactly once; replaying the log in order, an agent's load (its assignments less
    // the closes of what it held) at each assignment never above its capacity.
    const events = await loggedEvents(survivor, company);
    const perConversation = new Map<string, number>();
    const load = new Map<string, number>();
    for (const event of events) {
      if (event.type === 'conversation.closed') {
        const agentId = event.data.conversation.assignedAgentId!;
        load.set(agentId, load.get(agentId)! - 1);
        continue;
      }
      perConversation.set(event.data.conversation.id, (perConversation.get(event.data.conversation.id) ?? 0) + 1);
      const now = (load.get(event.data.agentId) ?? 0) + 1;
      load.set(event.data.agentId, now);
      expect(now).toBeLessThanOrEqual(CAPACITY);
    }
    expect(perConversation.size).toBe(CONVERSATIONS);
    expect([...perConversation.values()].filter((count) => count !== 1)).toEqual([]);
    const stored = await agents();
    expect(stored.map((agent) => agent.loadTotal)).toEqual(agentIds.map((id) => load.get(id)));
    expect(stored.every((agent) => agent.held.length === agent.loadTotal && agent.loadTotal === CAPACITY)).toBe(true);
  }, 180_000);
});

describe('a queue timeout across a kill -9', () => {
  // The restarted process's clock: moved to the timer's due time instead of waiting the team's minimum of 60 s.
  const clock = new TestClock();
  let deployment: Deployment;

  beforeAll(async () => {
    deployment = await startDeployment('queuetimeoutprocesses', { THROTTLE_LIMIT: '1000000' }, 0, clock);
  });
  afterAll(async () => {
    await deployment.stop();
  });

  it('fires once within 5 s of its due time in another process after the one that set it is killed', async () => {
    // The only process while the timer is set: the spawned one.
    const victim = await deployment.spawn({ THROTTLE_LIMIT: '1000000' });
    const http = () => request(victim.base);
    const company = await registerCompany(request.agent(victim.base), 'Timeouts');
    const team = (
      await http()
        .post('/v1/teams')
        .set(company.auth)
        .send({ name: 'Closing', strategy: 'manual', maxWaitSeconds: 60, overflow: { action: 'close' } })
        .expect(201)
    ).body;
    const { body: contact } = await http()
      .post('/v1/contacts')
      .set(company.auth)
      .send({ name: 'Waiting', email: uniqueEmail('waiting') })
      .expect(201);
    const { body: opened } = await http().post('/v1/conversations').set(company.auth).send({ contactId: contact.id }).expect(201);
    await http().patch(`/v1/conversations/${opened.id}`).set(company.auth).send({ teamId: team.id, status: 'queued' }).expect(200);
    const client = await MongoClient.connect(`${deployment.engine.uri}queuetimeoutprocesses`);
    try {
      const timers = client.db().collection<{ _id: string; kind: string; dueAt: Date }>('timers');
      const timer = await waitFor(() => timers.findOne({ kind: QUEUE_TIMEOUT }), { timeoutMs: 10_000, message: 'the queue timer to be set' });
      await victim.kill();

      const restarted = (await deployment.add()).app;
      const conversation = () => restarted.model<Conversation>(Conversation.name).findOne({ _id: opened.id, companyId: company.companyId }).lean();
      expect(await conversation()).toMatchObject({ status: 'queued' });
      // The restarted process's now becomes the due time; the timer must fire within 5 s of it.
      clock.advance(timer.dueAt.getTime() - clock.now().getTime());
      await waitFor(async () => (await conversation())!.status === 'closed', { timeoutMs: 5000, message: 'the queue timeout within 5 s' });
      expect(await conversation()).toMatchObject({ closeReason: 'queue_timeout' });
      // Due again and past any lease: nothing fires twice.
      clock.advance(120_000);
      await new Promise((resolve) => setTimeout(resolve, 700));
      await settle(restarted);
      const fired = await restarted.app
        .get(EventLogRepository)
        .range(company.companyId, { after: 0, types: ['conversation.queue_timeout', 'conversation.closed'] }, 10);
      expect(fired.map((event) => [event.type, (event.data as { conversation: { id: string } }).conversation.id]).sort()).toEqual([
        ['conversation.closed', opened.id],
        ['conversation.queue_timeout', opened.id],
      ]);
      expect(await timers.countDocuments({ kind: QUEUE_TIMEOUT })).toBe(0);
    } finally {
      await client.close();
    }
  }, 120_000);
});

/** `count` open conversations (status `bot`), each with a contact of its own: one made through the API, the rest copies written in bulk. */
async function openConversations(t: TestApp, company: TestCompany, count: number): Promise<string[]> {
  const contactModel = t.model<Contact>(Contact.name);
  const conversationModel = t.model<Conversation>(Conversation.name);
  const { body: contact } = await t.http
    .post('/v1/contacts')
    .set(company.auth)
    .send({ name: 'Model', email: uniqueEmail('model') })
    .expect(201);
  const { body: opened } = await t.http.post('/v1/conversations').set(company.auth).send({ contactId: contact.id }).expect(201);
  const contactRow = (await contactModel.findOne({ _id: contact.id, companyId: company.companyId }).lean())!;
  const conversationRow = (await conversationModel.findOne({ _id: opened.id, companyId: company.companyId }).lean())!;
  const contacts = Array.from({ length: count - 1 }, (_, n) => ({
    ...contactRow,
    _id: new Types.ObjectId(),
    name: `Waiting ${n}`,
    email: uniqueEmail('waiting'),
  }));
  await contactModel.collection.insertMany(contacts);
  const copies = contacts.map((row) => ({ ...conversationRow, _id: new Types.ObjectId(), contactId: row._id }));
  await conversationModel.collection.insertMany(copies);
  return [opened.id as string, ...copies.map((row) => row._id.toHexString())];
}

/** The company's `conversation.assigned` and `conversation.closed` events, in log order. */
async function loggedEvents(
  t: TestApp,
  company: TestCompany,
): Promise<Array<DomainEvent<'conversation.assigned'> | DomainEvent<'conversation.closed'>>> {
  const log = t.app.get(EventLogRepository);
  const events: Array<DomainEvent<'conversation.assigned'> | DomainEvent<'conversation.closed'>> = [];
  for (;;) {
    const page = (await log.range(
      company.companyId,
      { after: events.at(-1)?.sequence ?? 0, types: ['conversation.assigned', 'conversation.closed'] },
      1000,
    )) as typeof events;
    events.push(...page);
    if (page.length < 1000) return events;
  }
}
