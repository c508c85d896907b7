import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent } from '../../src/agents/agent.schema.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { DatabaseTarget } from '../../src/database/database-target.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { EventLogRepository } from '../../src/events/event-log.repository.js';
import {
  addAgent,
  createApiKey,
  registerCompany,
  uniqueEmail,
  type TestAgentLogin,
  type TestCompany,
} from '../support/factories.js';
import { settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Tenant extends TestCompany {
  key: string;
}

describe('auto-assignment', () => {
  let t: TestApp;
  /** A second instance of the API on the same database, as another process would be. */
  let other: TestApp;

  beforeAll(async () => {
    t = await createTestApp();
    other = await createTestApp({ env: { MONGODB_URI: t.app.get(DatabaseTarget).uri } });
  });
  // Passport keeps strategies in one registry per process, so the instance created last
  // authenticates for both: it must stay up as long as the first one serves requests.
  afterAll(async () => {
    await other.close();
    await t.close();
  });

  /** A company whose admin is offline, so only the agents a test adds can receive conversations. */
  const tenant = async (name: string, autoAssignment: Record<string, unknown>): Promise<Tenant> => {
    const company = await registerCompany(t.http, name);
    await t.http.patch(`/v1/agents/${company.agentId}`).set(company.auth).send({ status: 'offline' }).expect(200);
    await t.http.patch('/v1/settings').set(company.auth).send({ autoAssignment }).expect(200);
    return { ...company, key: await createApiKey(t.http, company, ['messages:write']) };
  };

  const agents = async (company: TestCompany, count: number): Promise<TestAgentLogin[]> => {
    const added: TestAgentLogin[] = [];
    for (let index = 0; index < count; index += 1) added.push(await addAgent(t, company, 'agent'));
    return added;
  };

  /** A new bot conversation, opened by a customer's message. */
  const openConversation = async (company: Tenant, http = t.http): Promise<string> => {
    const response = await http
      .post('/api/external/messages')
      .set('x-api-key', company.key)
      .send({ from: { email: uniqueEmail('customer') }, text: 'hello' })
      .expect(201);
    return response.body.data.conversation.id as string;
  };

  const handOff = (company: TestCompany, id: string, http = t.http) =>
    http.patch(`/v1/conversations/${id}`).set(company.auth).send({ status: 'queued' }).expect(200);

  const stored = (company: TestCompany, ids: string[]) =>
    t.model<Conversation>(Conversation.name).find({ companyId: company.companyId, _id: { $in: ids } }).sort({ _id: 1 }).lean();

  const loadOf = async (company: TestCompany) => {
    const rows = await t
      .model<Conversation>(Conversation.name)
      .find({ companyId: company.companyId, status: 'human' })
      .lean();
    const load = new Map<string, number>();
    for (const row of rows) load.set(row.assignedAgentId!.toHexString(), (load.get(row.assignedAgentId!.toHexString()) ?? 0) + 1);
    return load;
  };

  it('round robin spreads 20 sequential hand-offs evenly over 4 agents, in rotation', async () => {
    const company = await tenant('Fair', { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 10 });
    const team = await agents(company, 4);
    const ids: string[] = [];
    for (let index = 0; index < 20; index += 1) {
      const id = await openConversation(company);
      const response = await handOff(company, id);
      // The hand-off answers the conversation as it stored it: auto-assignment reacts after the answer.
      expect(response.body).toMatchObject({ id, status: 'queued', assignedAgentId: null });
      await settle(t);
      ids.push(id);
    }
    const logged = await t.app.get(EventLogRepository).range(company.companyId, { after: 0, types: ['conversation.assigned'] }, 100);
    const assigned = logged as DomainEvent<'conversation.assigned'>[];

    const conversations = await stored(company, ids);
    expect(conversations.every((conversation) => conversation.status === 'human')).toBe(true);
    expect(conversations.every((conversation) => conversation.assignedBy?.kind === 'auto')).toBe(true);
    const load = await loadOf(company);
    expect(team.map((agent) => load.get(agent.agentId))).toEqual([5, 5, 5, 5]);
    const order = conversations.map((conversation) => conversation.assignedAgentId!.toHexString());
    expect(order.slice(4)).toEqual(order.slice(0, 16));
    expect(new Set(order.slice(0, 4)).size).toBe(4);
    expect(assigned.map((event) => event.data.conversation.id)).toEqual(ids);
  });

  it('least busy picks the agent with the fewest open conversations', async () => {
    const company = await tenant('Balanced', { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 10 });
    const [loaded, idle, half] = await agents(company, 3);
    for (const [agent, count] of [[loaded, 2], [half, 1]] as const) {
      for (let index = 0; index < count; index += 1) {
        const id = await openConversation(company);
        await t.http.post(`/v1/conversations/${id}/assign`).set(company.auth).send({ agentId: agent.agentId }).expect(200);
      }
    }
    const picks: string[] = [];
    for (let index = 0; index < 4; index += 1) {
      const id = await openConversation(company);
      await handOff(company, id);
      await settle(t);
      picks.push((await stored(company, [id]))[0].assignedAgentId!.toHexString());
    }
    // Loads (loaded, idle, half): (2,0,1) → idle; (2,1,1) tie, half never auto-assigned → half;
    // (2,1,2) → idle; (2,2,2) tie, loaded never auto-assigned → loaded.
    expect(picks).toEqual([idle.agentId, half.agentId, idle.agentId, loaded.agentId]);
  });

  it('never pushes an agent over capacity under concurrent hand-offs, in one process or two', async () => {
    const company = await tenant('Crowded', { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 2 });
    const team = await agents(company, 2);
    const ids: string[] = [];
    for (let index = 0; index < 10; index += 1) ids.push(await openConversation(company));

    await Promise.all(ids.map((id, index) => handOff(company, id, index % 2 === 0 ? t.http : other.http)));
    await settle(t, other);

    const conversations = await stored(company, ids);
    expect(conversations.filter((conversation) => conversation.status === 'human')).toHaveLength(4);
    expect(conversations.filter((conversation) => conversation.status === 'queued')).toHaveLength(6);
    const load = await loadOf(company);
    expect(team.map((agent) => load.get(agent.agentId))).toEqual([2, 2]);
    // The counters routing reserves against say the same as the conversations.
    const counters = await t.model<Agent>(Agent.name).find({ companyId: company.companyId, _id: { $in: team.map((agent) => agent.agentId) } }).lean();
    expect(counters.map((agent) => agent.loadTotal).sort()).toEqual([2, 2]);
  });

  it('serves the queue when an agent gains room: one closes a conversation, another comes online', async () => {
    const company = await tenant('Waiting', { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 1 });
    const [first] = await agents(company, 1);
    const [a, b, c] = [await openConversation(company), await openConversation(company), await openConversation(company)];
    for (const id of [a, b, c]) await handOff(company, id);
    await settle(t);
    expect((await stored(company, [a, b, c])).map((conversation) => conversation.status)).toEqual(['human', 'queued', 'queued']);

    await t.http.post(`/v1/conversations/${a}/close`).set(first.auth).send({}).expect(200);
    await settle(t);
    expect((await stored(company, [b]))[0]).toMatchObject({ status: 'human' });
    expect((await stored(company, [b]))[0].assignedAgentId?.toHexString()).toBe(first.agentId);

    const late = await addAgent(t, company, 'agent');
    await settle(t);
    const holder = async () => (await stored(company, [c])).map((conversation) => [conversation.status, conversation.assignedAgentId?.toHexString()]);
    expect(await holder()).toEqual([['human', late.agentId]]);

    // Going away later leaves the agent what it holds.
    await t.http.patch(`/v1/agents/${late.agentId}`).set(late.auth).send({ status: 'away' }).expect(200);
    await settle(t);
    expect(await holder()).toEqual([['human', late.agentId]]);
  });

  it('leaves conversations queued when no agent is eligible (offline, away, deactivated) or when disabled', async () => {
    const company = await tenant('Nobody', { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 5 });
    const [away, gone] = await agents(company, 2);
    await t.http.patch(`/v1/agents/${away.agentId}`).set(away.auth).send({ status: 'away' }).expect(200);
    await t.http.delete(`/v1/agents/${gone.agentId}`).set(company.auth).expect(200);
    // Deactivation also sets the agent offline; online again, only isActive keeps it out.
    await t.model<Agent>(Agent.name).updateOne({ companyId: company.companyId, _id: gone.agentId }, { $set: { status: 'online' } });
    const id = await openConversation(company);
    await handOff(company, id);
    await settle(t);
    expect((await stored(company, [id]))[0]).toMatchObject({ status: 'queued', assignedAgentId: null });

    const off = await tenant('Manual', { enabled: false });
    await agents(off, 1);
    const manual = await openConversation(off);
    await handOff(off, manual);
    await settle(t);
    expect((await stored(off, [manual]))[0]).toMatchObject({ status: 'queued', assignedAgentId: null });
  });

  it('re-assigns the conversations of a deactivated agent to the others', async () => {
    const company = await tenant('Shift', { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 5 });
    const [leaving, staying] = await agents(company, 2);
    const ids = [await openConversation(company), await openConversation(company)];
    for (const id of ids) {
      await t.http.post(`/v1/conversations/${id}/assign`).set(company.auth).send({ agentId: leaving.agentId }).expect(200);
    }
    await t.http.delete(`/v1/agents/${leaving.agentId}`).set(company.auth).expect(200);
    await settle(t);
    const conversations = await stored(company, ids);
    expect(conversations.map((conversation) => [conversation.status, conversation.assignedAgentId?.toHexString()])).toEqual([
      ['human', staying.agentId],
      ['human', staying.agentId],
    ]);
  });
});
