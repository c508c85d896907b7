import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Types } from 'mongoose';
import { Agent } from '../../src/agents/agent.schema.js';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { AgentLoadRepair, HOLD_CHECK, holdWindowOf } from '../../src/assignment/agent-load-repair.js';
import { ContactIdentities } from '../../src/contacts/contact-identities.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { AnyDomainEvent } from '../../src/events/domain-events.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import { DurableTimers } from '../../src/lanes/durable-timers.js';
import { Message } from '../../src/messages/message.schema.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { settle } from '../support/event-log.js';
import { addAgent, createApiKey, registerCompany, uniqueEmail, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { TestClock } from '../support/test-clock.js';
import type { TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';

/** Routing (contract section 19): the fair order, teams and skills, the queue views, transfers and the maximum wait. */
describe('routing', () => {
  const clock = new TestClock();
  let deployment: Deployment;
  let t: TestApp;

  beforeAll(async () => {
    deployment = await startDeployment('routing', { THROTTLE_LIMIT: '100000' }, 1, clock);
    t = deployment.apps[0];
  });
  afterAll(async () => {
    await deployment.stop();
  });

  /** A company with routing on whose admin is offline, so only the agents a test brings online take conversations. */
  const company = async (name: string): Promise<TestCompany> => {
    const created = await registerCompany(t.http, name);
    await t.http.patch(`/v1/agents/${created.agentId}`).set(created.auth).send({ status: 'offline' }).expect(200);
    await t.http
      .patch('/v1/settings')
      .set(created.auth)
      .send({ autoAssignment: { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 10 } })
      .expect(200);
    return created;
  };
  const offlineAgent = async (of: TestCompany, role: 'agent' | 'supervisor' = 'agent'): Promise<TestAgentLogin> => {
    const agent = await addAgent(t, of, role);
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(of.auth).send({ status: 'offline' }).expect(200);
    return agent;
  };
  const online = (of: TestCompany, agent: TestAgentLogin, fields: Record<string, unknown> = {}) =>
    t.http
      .patch(`/v1/agents/${agent.agentId}`)
      .set(of.auth)
      .send({ status: 'online', ...fields })
      .expect(200);
  /** A queued conversation with `fields` (priority, teamId, requiredSkills) set before it is handed off. */
  const queued = async (of: TestCompany, fields: Record<string, unknown> = {}): Promise<string> => {
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(of.companyId, { email: uniqueEmail('contact'), name: 'Grace' });
    const { body } = await t.http.post('/v1/conversations').set(of.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    await t.http
      .patch(`/v1/conversations/${body.id}`)
      .set(of.auth)
      .send({ ...fields, status: 'queued' })
      .expect(200);
    return body.id as string;
  };
  const stored = (of: TestCompany, id: string) => t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: of.companyId }).lean();
  const events = async (of: TestCompany, type: AnyDomainEvent['type']) =>
    (await t.app.get(EventLogRepository).range(of.companyId, { after: 0, types: [type] }, 1000)) as AnyDomainEvent[];
  /** Holds routing's reservations at a gate: `reached` once the first arrives, and `open()` lets them all through. */
  const holdReservations = () => {
    const agents = t.app.get(AgentsRepository);
    const reserve = agents.reserve.bind(agents);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    const spy = jest.spyOn(agents, 'reserve').mockImplementation(async (...args) => {
      arrived();
      await gate;
      return reserve(...args);
    });
    return { reached, open, restore: () => spy.mockRestore() };
  };
  const loadOf = async (of: TestCompany, agent: TestAgentLogin) =>
    (await t.model<Agent>(Agent.name).findOne({ _id: agent.agentId, companyId: of.companyId }).lean())!.loadTotal;

  it('serves a queue in the fair order (priority, then oldest), shown alike by the queue views', async () => {
    const acme = await company('Fair');
    const agent = await offlineAgent(acme);
    const priorities = ['low', 'high', 'medium', 'high', 'low', 'medium'];
    const ids: string[] = [];
    for (const priority of priorities) {
      ids.push(await queued(acme, { priority }));
      clock.advance(1000);
    }
    const fair = [ids[1], ids[3], ids[2], ids[5], ids[0], ids[4]];

    const first = await t.http.get('/v1/queue?limit=4').set(agent.auth).expect(200);
    expect(first.body.data.map((entry: { conversation: { id: string } }) => entry.conversation.id)).toEqual(fair.slice(0, 4));
    expect(first.body.data.map((entry: { position: number }) => entry.position)).toEqual([1, 2, 3, 4]);
    expect(first.body.data[0].waitingSeconds).toBeGreaterThanOrEqual(4);
    const second = await t.http.get(`/v1/queue?limit=4&cursor=${first.body.nextCursor}`).set(agent.auth).expect(200);
    expect(second.body).toMatchObject({
      nextCursor: null,
      data: [
        { conversation: { id: fair[4] }, position: 5 },
        { conversation: { id: fair[5] }, position: 6 },
      ],
    });
    await t.http.get('/v1/queue?cursor=bogus').set(agent.auth).expect(400);
    expect((await t.http.get(`/v1/conversations/${ids[2]}`).set(agent.auth).expect(200)).body.queue).toMatchObject({ teamId: null, position: 3 });

    const key = await createApiKey(t.http, acme, ['messages:write']);
    const external = await t.http.get(`/api/external/conversations/${ids[0]}/queue`).set('x-api-key', key).expect(200);
    expect(external.body).toMatchObject({ success: true, data: { teamId: null, position: 5 } });

    // One agent with room for them all comes online: it takes them in the fair order.
    await online(acme, agent, { capacity: 6 });
    await settle(t);
    const assigned = (await events(acme, 'conversation.assigned')).map((event) => (event.data as { conversation: { id: string } }).conversation.id);
    expect(assigned).toEqual(fair);
    expect(await loadOf(acme, agent)).toBe(6);
    expect((await t.http.get(`/v1/conversations/${ids[2]}`).set(agent.auth).expect(200)).body.queue).toBeNull();
    await t.http.get(`/api/external/conversations/${ids[0]}/queue`).set('x-api-key', key).expect(404);
    expect((await t.http.get('/v1/queue').set(agent.auth).expect(200)).body.data).toEqual([]);
  });

  it("routes a team's queue to its members with the skills, never beyond capacity or a channel's limit", async () => {
    const acme = await company('Teams');
    const [french, plain, outsider] = [await offlineAgent(acme), await offlineAgent(acme), await offlineAgent(acme)];
    const team = (
      await t.http
        .post('/v1/teams')
        .set(acme.auth)
        .send({ name: 'Support', memberIds: [french.agentId, plain.agentId] })
        .expect(201)
    ).body;
    const needsFrench = await queued(acme, { teamId: team.id, requiredSkills: ['french'] });
    const anyMember = await queued(acme, { teamId: team.id });
    const overflowing = await queued(acme, { teamId: team.id });
    const teamQueue = await t.http.get(`/v1/teams/${team.id}/queue`).set(plain.auth).expect(200);
    expect(teamQueue.body.data.map((entry: { conversation: { id: string } }) => entry.conversation.id)).toEqual([
      needsFrench,
      anyMember,
      overflowing,
    ]);
    expect((await t.http.get('/v1/queue').set(plain.auth).expect(200)).body.data).toEqual([]);

    await online(acme, outsider);
    await online(acme, plain, { capacity: 1 });
    await settle(t);
    // The outsider is no member; the plain agent lacks the skill for the first, and takes the next one only.
    expect((await stored(acme, needsFrench))!.status).toBe('queued');
    expect((await stored(acme, anyMember))!.assignedAgentId?.toHexString()).toBe(plain.agentId);
    expect((await stored(acme, overflowing))!.status).toBe('queued');

    await online(acme, french, { skills: ['french'], capacityByChannel: { api: 1 } });
    await settle(t);
    expect((await stored(acme, needsFrench))!.assignedAgentId?.toHexString()).toBe(french.agentId);
    // Its channel's limit is reached: the last one waits though it has total room.
    expect((await stored(acme, overflowing))!.status).toBe('queued');
    const agent = (await t.http.get(`/v1/agents/${french.agentId}`).set(acme.auth).expect(200)).body;
    expect(agent).toMatchObject({ load: { total: 1, byChannel: { api: 1 } }, teamIds: [team.id] });

    // Closing frees room: the waiting one goes.
    await t.http.post(`/v1/conversations/${anyMember}/close`).set(acme.auth).send({}).expect(200);
    await settle(t);
    expect((await stored(acme, overflowing))!.assignedAgentId?.toHexString()).toBe(plain.agentId);
    expect(await loadOf(acme, plain)).toBe(1);

    // A manual team is never routed; a foreign team id is refused by PATCH.
    const manual = (
      await t.http
        .post('/v1/teams')
        .set(acme.auth)
        .send({ name: 'Manual', memberIds: [outsider.agentId], strategy: 'manual' })
        .expect(201)
    ).body;
    const waiting = await queued(acme, { teamId: manual.id });
    await settle(t);
    expect((await stored(acme, waiting))!.status).toBe('queued');
    const other = await registerCompany(t.http, 'Other');
    const foreign = (await t.http.post('/v1/teams').set(other.auth).send({ name: 'Theirs' }).expect(201)).body;
    const refused = await t.http.patch(`/v1/conversations/${waiting}`).set(acme.auth).send({ teamId: foreign.id }).expect(400);
    expect(JSON.stringify(refused.body)).toContain('teamId');
    await t.http
      .patch(`/v1/conversations/${waiting}`)
      .set(acme.auth)
      .send({ requiredSkills: ['Bad Skill'] })
      .expect(400);
    expect((await stored(acme, waiting))!.teamId?.toHexString()).toBe(manual.id);
    await t.http.get(`/v1/teams/${foreign.id}/queue`).set(acme.auth).expect(404);
  });

  it('transfers to a team or an agent, with a private note and conversation.transferred; plain agents only their own', async () => {
    const acme = await company('Transfers');
    const [owner, bystander] = [await offlineAgent(acme), await offlineAgent(acme)];
    const team = (await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Tier 2', strategy: 'manual' }).expect(201)).body;
    const id = await queued(acme);
    await t.http.post(`/v1/conversations/${id}/assign`).set(acme.auth).send({ agentId: owner.agentId }).expect(200);
    expect(await loadOf(acme, owner)).toBe(1);

    await t.http.post(`/v1/conversations/${id}/transfer`).set(bystander.auth).send({ teamId: team.id }).expect(403);
    const both = await t.http.post(`/v1/conversations/${id}/transfer`).set(owner.auth).send({ teamId: team.id, agentId: owner.agentId }).expect(400);
    expect(JSON.stringify(both.body)).toContain('teamId');
    await t.http.post(`/v1/conversations/${id}/transfer`).set(owner.auth).send({}).expect(400);
    expect((await stored(acme, id))!.assignedAgentId?.toHexString()).toBe(owner.agentId);

    const moved = await t.http.post(`/v1/conversations/${id}/transfer`).set(owner.auth).send({ teamId: team.id, note: 'Needs tier 2' }).expect(200);
    expect(moved.body).toMatchObject({ id, status: 'queued', teamId: team.id, assignedAgentId: null });
    await settle(t);
    expect(await loadOf(acme, owner)).toBe(0);
    const [transferred] = await events(acme, 'conversation.transferred');
    expect(transferred.data).toMatchObject({ from: { teamId: null, agentId: owner.agentId }, to: { teamId: team.id, agentId: null } });
    const notes = await t.model<Message>(Message.name).find({ companyId: acme.companyId, conversationId: id, private: true }).lean();
    expect(notes.map((note) => note.text)).toEqual(['Needs tier 2']);

    // Unassigned now: any agent may move it, here to an agent.
    const toAgent = await t.http.post(`/v1/conversations/${id}/transfer`).set(bystander.auth).send({ agentId: bystander.agentId }).expect(200);
    expect(toAgent.body).toMatchObject({ status: 'human', assignedAgentId: bystander.agentId, teamId: team.id });
    expect(await loadOf(acme, bystander)).toBe(1);
    await settle(t);
    const [, toAgentEvent] = await events(acme, 'conversation.transferred');
    expect(toAgentEvent.data).toMatchObject({ from: { teamId: team.id, agentId: null }, to: { teamId: team.id, agentId: bystander.agentId } });
    const other = await registerCompany(t.http, 'Elsewhere');
    await t.http.post(`/v1/conversations/${id}/transfer`).set(other.auth).send({ agentId: other.agentId }).expect(404);
    const foreignAgent = await t.http.post(`/v1/conversations/${id}/transfer`).set(acme.auth).send({ agentId: other.agentId }).expect(400);
    expect(JSON.stringify(foreignAgent.body)).toContain('agentId');
  });

  it("a conversation opened on a channel with a teamId joins that team's queue", async () => {
    const acme = await company('Channel team');
    const team = (await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Web desk', strategy: 'manual' }).expect(201)).body;
    const other = await registerCompany(t.http, 'Not ours');
    const foreign = (await t.http.post('/v1/teams').set(other.auth).send({ name: 'Theirs' }).expect(201)).body;
    const refused = await t.http
      .post('/v1/channels')
      .set(acme.auth)
      .send({ key: 'webchat', type: 'web', name: 'Web chat', teamId: foreign.id })
      .expect(400);
    expect(JSON.stringify(refused.body)).toContain('teamId');
    const channel = await t.http
      .post('/v1/channels')
      .set(acme.auth)
      .send({ key: 'webchat', type: 'web', name: 'Web chat', teamId: team.id })
      .expect(201);
    expect(channel.body.teamId).toBe(team.id);
    const key = await createApiKey(t.http, acme, ['messages:write']);
    const inbound = await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { email: uniqueEmail('visitor') }, text: 'hi', channel: 'webchat' })
      .expect(201);
    const id = inbound.body.data.conversation.id as string;
    await settle(t);
    expect((await stored(acme, id))!.teamId?.toHexString()).toBe(team.id);
    await t.http.patch(`/v1/conversations/${id}`).set(acme.auth).send({ status: 'queued' }).expect(200);
    const queue = await t.http.get(`/v1/teams/${team.id}/queue`).set(acme.auth).expect(200);
    expect(queue.body.data.map((entry: { conversation: { id: string } }) => entry.conversation.id)).toEqual([id]);
  });

  it("the flow step assign_team moves a conversation to the team's queue; a bad teamId is refused when the flow is written", async () => {
    const acme = await company('Flow team');
    const team = (await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Flowed', strategy: 'manual' }).expect(201)).body;
    const refused = await t.http
      .post('/v1/flows')
      .set(acme.auth)
      .send({ name: 'Bad', steps: [{ type: 'assign_team', teamId: 'nope' }] })
      .expect(400);
    expect(JSON.stringify(refused.body)).toContain('teamId');
    const flow = (
      await t.http
        .post('/v1/flows')
        .set(acme.auth)
        .send({ name: 'To team', steps: [{ type: 'assign_team', teamId: team.id }] })
        .expect(201)
    ).body;
    const contact = await t.app.get(ContactIdentities).findOrCreateByIdentity(acme.companyId, { email: uniqueEmail('contact'), name: 'Ada' });
    const { body } = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact._id.toHexString() }).expect(201);
    const run = await t.http.post(`/v1/flows/${flow.id}/execute`).set(acme.auth).send({ conversationId: body.id }).expect(200);
    expect(run.body).toMatchObject({ status: 'completed', steps: [{ type: 'assign_team', status: 'completed' }] });
    expect(await stored(acme, body.id)).toMatchObject({ status: 'queued', assignedAgentId: null });
    expect((await stored(acme, body.id))!.teamId?.toHexString()).toBe(team.id);
    const queue = await t.http.get(`/v1/teams/${team.id}/queue`).set(acme.auth).expect(200);
    expect(queue.body.data.map((entry: { conversation: { id: string } }) => entry.conversation.id)).toEqual([body.id]);
  });

  it('applies a team overflow once when the maximum wait passes, also after a restart', async () => {
    const acme = await company('Overflow');
    const closing = (
      await t.http
        .post('/v1/teams')
        .set(acme.auth)
        .send({ name: 'Closing', strategy: 'manual', maxWaitSeconds: 60, overflow: { action: 'close' } })
        .expect(201)
    ).body;
    const next = (await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Next', strategy: 'manual' }).expect(201)).body;
    const moving = (
      await t.http
        .post('/v1/teams')
        .set(acme.auth)
        .send({ name: 'Moving', strategy: 'manual', maxWaitSeconds: 60, overflow: { action: 'team', teamId: next.id } })
        .expect(201)
    ).body;
    const telling = (
      await t.http
        .post('/v1/teams')
        .set(acme.auth)
        .send({ name: 'Telling', strategy: 'manual', maxWaitSeconds: 60, overflow: { action: 'message', text: 'Still here, thanks for waiting' } })
        .expect(201)
    ).body;
    const toClose = await queued(acme, { teamId: closing.id });
    const toMove = await queued(acme, { teamId: moving.id });
    const toTell = await queued(acme, { teamId: telling.id });
    await settle(t);
    const queuedAt = (await stored(acme, toMove))!.queuedAt;

    // The process that set the timers goes; another one fires them.
    await t.close();
    const restarted = await deployment.add();
    t = restarted.app;
    clock.advance(61_000);
    await waitFor(async () => (await stored(acme, toClose))!.status === 'closed', { timeoutMs: 5000, message: 'the queue timeout to close it' });
    await waitFor(async () => (await stored(acme, toMove))!.teamId?.toHexString() === next.id, {
      timeoutMs: 5000,
      message: 'the overflow to move it',
    });
    expect(await stored(acme, toClose)).toMatchObject({ closeReason: 'queue_timeout' });
    expect((await stored(acme, toMove))!.queuedAt).toEqual(queuedAt);
    await waitFor(async () => (await stored(acme, toTell))!.queueTimeout !== null, { timeoutMs: 5000, message: 'the overflow message' });
    expect(await stored(acme, toTell)).toMatchObject({ status: 'queued' });
    clock.advance(61_000);
    await new Promise((resolve) => setTimeout(resolve, 700));
    await settle(t);
    const timeouts = (await events(acme, 'conversation.queue_timeout')).map(
      (event) => event.data as { conversation: { id: string }; action: string; teamId: string },
    );
    expect(timeouts.map(({ conversation, action, teamId }) => [conversation.id, action, teamId]).sort()).toEqual(
      [
        [toClose, 'close', closing.id],
        [toMove, 'team', moving.id],
        [toTell, 'message', telling.id],
      ].sort(),
    );
    const told = await t.model<Message>(Message.name).find({ companyId: acme.companyId, conversationId: toTell, senderType: 'bot' }).lean();
    expect(told.map((message) => message.text)).toEqual(['Still here, thanks for waiting']);
  });

  it('sets an idle online agent away on a durable timer, and logs every status change with its reason', async () => {
    const acme = await company('Presence');
    for (const bad of [59, 86_401, 'soon']) {
      const refused = await t.http
        .patch('/v1/settings')
        .set(acme.auth)
        .send({ autoAssignment: { awayAfterIdleSeconds: bad } })
        .expect(400);
      expect(JSON.stringify(refused.body)).toContain('awayAfterIdleSeconds');
    }
    expect((await t.http.get('/v1/settings').set(acme.auth).expect(200)).body.autoAssignment.awayAfterIdleSeconds).toBeNull();
    await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ autoAssignment: { awayAfterIdleSeconds: 60 } })
      .expect(200);
    const idle = await offlineAgent(acme);
    const busy = await offlineAgent(acme);
    await t.http.patch(`/v1/agents/${idle.agentId}`).set(idle.auth).send({ status: 'online' }).expect(200);
    await t.http.patch(`/v1/agents/${busy.agentId}`).set(acme.auth).send({ status: 'online' }).expect(200);

    // One agent keeps working; the other is silent past the limit.
    clock.advance(40_000);
    await t.http.get('/v1/teams').set(busy.auth).expect(200);
    clock.advance(40_000);
    await t.http.get('/v1/teams').set(busy.auth).expect(200);
    clock.advance(20_000);
    await waitFor(
      async () => (await t.model<Agent>(Agent.name).findOne({ _id: idle.agentId, companyId: acme.companyId }).lean())!.status === 'away',
      {
        timeoutMs: 5000,
        message: 'the idle agent to be away',
      },
    );
    expect((await t.model<Agent>(Agent.name).findOne({ _id: busy.agentId, companyId: acme.companyId }).lean())!.status).toBe('online');

    await settle(t);
    const changes = (await events(acme, 'agent.status_changed')).map(
      (event) => event.data as { agent: { id: string; status: string }; previousStatus: string; reason: string },
    );
    const of = (agent: TestAgentLogin) =>
      changes
        .filter((change) => change.agent.id === agent.agentId)
        .map(({ agent: { status }, previousStatus, reason }) => [previousStatus, status, reason]);
    // Created online, then set offline by the admin (the test's helper), then online.
    expect(of(idle)).toEqual([
      ['online', 'offline', 'admin'],
      ['offline', 'online', 'agent'],
      ['online', 'away', 'idle'],
    ]);
    expect(of(busy)).toEqual([
      ['online', 'offline', 'admin'],
      ['offline', 'online', 'admin'],
    ]);
  });

  it('serves the queue again when an agent gains capacity', async () => {
    const acme = await company('More room');
    const agent = await offlineAgent(acme);
    const [first, second] = [await queued(acme), await queued(acme)];
    await online(acme, agent, { capacity: 1 });
    await settle(t);
    expect((await stored(acme, second))!.status).toBe('queued');
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ capacity: 2 }).expect(200);
    await settle(t);
    expect([(await stored(acme, first))!.status, (await stored(acme, second))!.status]).toEqual(['human', 'human']);
  });

  it('releases a hold whose assignment was never written (a process killed between the two writes)', async () => {
    const acme = await company('Crash');
    const agent = await offlineAgent(acme);
    const id = await queued(acme);
    // Routing has served the queue (no one online) before the agent is set online behind its back: a pass that came
    // later would take the conversation as soon as the hold is released, and the load would never be seen at 0.
    await settle(t);
    const agents = t.app.get(AgentsRepository);
    const agentId = new Types.ObjectId(agent.agentId);
    // What a process killed right after its reservation leaves behind: the repair timer covers it, the hold stays.
    const at = clock.now();
    await t.app.get(AgentLoadRepair).cover(acme.companyId, at);
    await t.model<Agent>(Agent.name).updateOne({ _id: agent.agentId, companyId: acme.companyId }, { $set: { status: 'online' } });
    expect(await agents.reserve(acme.companyId, agentId, new Types.ObjectId(id), 'api', { capacity: 1, channelCapacity: null }, at)).toBe(true);
    expect(await agents.reserve(acme.companyId, agentId, new Types.ObjectId(id), 'api', { capacity: 5, channelCapacity: null }, at)).toBe(false);
    expect(await loadOf(acme, agent)).toBe(1);
    clock.advance(61_000);
    await waitFor(async () => (await loadOf(acme, agent)) === 0, { timeoutMs: 15_000, message: 'the hold to be released' });
    // With its room back, routing gives it the conversation.
    await online(acme, agent, { capacity: 1 });
    await settle(t);
    expect((await stored(acme, id))!.assignedAgentId?.toHexString()).toBe(agent.agentId);
    expect(await loadOf(acme, agent)).toBe(1);
  });

  it('covers each window a pass reserves in with a repair timer (a pass that outlasts its 30 s window)', async () => {
    const acme = await company('Long pass');
    const agent = await offlineAgent(acme);
    // More than a pass decides at once, so the later reservations are stamped after the clock moves.
    for (let index = 0; index < 12; index += 1) await queued(acme);
    await settle(t);

    const gate = holdReservations();
    try {
      await online(acme, agent, { capacity: 12 });
      await gate.reached;
      // Just into the next window: the first window's timer stays due well after the pass (30 s on).
      clock.advance(30_000 - (clock.now().getTime() % 30_000) + 100);
      gate.open();
      await settle(t);
    } finally {
      gate.restore();
    }
    const holds = (await t.model<Agent>(Agent.name).findOne({ _id: agent.agentId, companyId: acme.companyId }).lean())!.held!;
    expect(holds).toHaveLength(12);
    const windows = [...new Set(holds.map((hold) => holdWindowOf(hold.at)))];
    expect(windows).toHaveLength(2);
    const timers = t.app.get(DurableTimers);
    for (const window of windows) {
      expect(await timers.dueAt(acme.companyId, HOLD_CHECK, `${acme.companyId}.${window}`)).toEqual(new Date(window + 60_000));
    }
  });

  it('serves an agent who comes online while a pass is under way (a nudge amid pending events is not lost)', async () => {
    const acme = await company('Morning');
    const [early, late] = [await offlineAgent(acme), await offlineAgent(acme)];
    const ids: string[] = [];
    for (let index = 0; index < 4; index += 1) ids.push(await queued(acme));
    await settle(t);

    // The pass the early agent starts is held at its first reservation while the late one comes online: the
    // assignments it then writes are events the next turn reads, and none of them frees room.
    const gate = holdReservations();
    try {
      await online(acme, early, { capacity: 2 });
      await gate.reached;
      await online(acme, late, { capacity: 2 });
      gate.open();
      await settle(t);
    } finally {
      gate.restore();
    }
    const holders = await Promise.all(ids.map(async (id) => (await stored(acme, id))!.assignedAgentId?.toHexString()));
    expect(holders.filter((holder) => holder === early.agentId)).toHaveLength(2);
    expect(holders.filter((holder) => holder === late.agentId)).toHaveLength(2);
    expect([await loadOf(acme, early), await loadOf(acme, late)]).toEqual([2, 2]);
  });
});
