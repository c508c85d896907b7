import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ConversationsRepository } from '../../src/conversations/conversations.repository.js';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { conversationHelpers, type Status } from '../support/conversations.js';
import { EventRecorder } from '../support/event-log.js';
import { addAgent, conversationSnapshot, twoCompanies, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('/v1/conversations: every transition, concurrent changes, the service for other modules', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  const { start, stored, conversationIn } = conversationHelpers(() => ({ t, acme, recorder }));

  describe('every transition through the API', () => {
    const moves = {
      queued: (id: string) => t.http.patch(`/v1/conversations/${id}`).set(acme.auth).send({ status: 'queued' }),
      human: (id: string) => t.http.post(`/v1/conversations/${id}/assign`).set(acme.auth).send({ agentId: acme.agentId }),
      closed: (id: string) => t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}),
    };
    // human → human is a reassignment: it is tried with another agent below.
    const table: [Status, keyof typeof moves, boolean][] = [
      ['bot', 'queued', true],
      ['bot', 'human', true],
      ['bot', 'closed', true],
      ['queued', 'queued', false],
      ['queued', 'human', true],
      ['queued', 'closed', true],
      ['human', 'queued', true],
      ['human', 'closed', true],
      ['closed', 'queued', false],
      ['closed', 'human', false],
      ['closed', 'closed', false],
    ];

    it.each(table)('%s → %s allowed: %s', async (from, to, allowed) => {
      const conversation = await conversationIn(from);
      const response = await moves[to](conversation.id);
      expect(response.status).toBe(allowed ? 200 : 400);
      const record = await stored(acme, conversation.id);
      expect(record?.status).toBe(allowed ? to : from);
      if (!allowed) expect(response.body.message).toMatch(new RegExp(`^Cannot move a conversation from ${from} to ${to}; allowed from ${from}: `));
    });

    it('human → human with another agent is a reassignment', async () => {
      const conversation = await conversationIn('human');
      const other = await addAgent(t, acme, 'agent');
      const response = await t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(acme.auth)
        .send({ agentId: other.agentId })
        .expect(200);
      expect(response.body).toMatchObject({ status: 'human', assignedAgentId: other.agentId });
    });
  });

  describe('concurrent changes', () => {
    afterEach(() => {
      jest.restoreAllMocks();
    });

    it('applies a status change only to the status it was checked against: the loser answers 409', async () => {
      const conversation = await start(acme);
      const repository = t.app.get(ConversationsRepository);
      const change = repository.change.bind(repository);
      // Another request closes the conversation between this request's read and its write.
      jest.spyOn(repository, 'change').mockImplementationOnce(async (...args) => {
        await t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({}).expect(200);
        return change(...args);
      });
      const response = await t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(acme.auth)
        .send({ agentId: acme.agentId })
        .expect(409);
      expect(response.body.message).toBe(
        `Conversation ${conversation.id} was changed by another request (it is now closed); read it again and retry`,
      );
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'closed', assignedAgentId: null });
      expect((await recorder.events()).map((event) => event.type)).toEqual(['conversation.closed']);
    });

    it('computes a change again when only fields it does not rely on moved, so its event shows the record as stored', async () => {
      const conversation = await start(acme);
      const repository = t.app.get(ConversationsRepository);
      const change = repository.change.bind(repository);
      // A reply lands (lastMessageAt, firstResponseAt) between this request's read and its write.
      const spy = jest.spyOn(repository, 'change').mockImplementationOnce(async (...args) => {
        await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).send({ text: 'One moment' }).expect(201);
        return change(...args);
      });
      const response = await t.http.post(`/v1/conversations/${conversation.id}/assign`).set(acme.auth).send({ agentId: acme.agentId }).expect(200);
      expect(response.body).toMatchObject({ status: 'human', lastMessageAt: expect.any(String), firstResponseAt: expect.any(String) });
      const assigned = (await recorder.events()).filter((event) => event.type === 'conversation.assigned');
      expect(assigned).toHaveLength(1);
      expect(assigned[0].data).toMatchObject({ conversation: conversationSnapshot(response.body) });
      // The first write missed the revision the reply made; the second, computed again, applied.
      expect(spy).toHaveBeenCalledTimes(2);
      expect(await stored(acme, conversation.id)).toMatchObject({ status: 'human', revision: 2 });
    });

    it('of concurrent closes exactly one applies and emits', async () => {
      const conversation = await start(acme);
      await recorder.clear();
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({})),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      for (const status of statuses.filter((code) => code !== 200)) expect([400, 409]).toContain(status);
      expect((await recorder.events()).filter((event) => event.type === 'conversation.closed')).toHaveLength(1);
    });
  });

  describe('ConversationsService for other modules', () => {
    it('requeueAgentConversations moves the agent’s open human conversations back to the queue', async () => {
      const agent = await addAgent(t, acme, 'agent');
      const other = await addAgent(t, acme, 'agent');
      const assign = (id: string, agentId: string) =>
        t.http.post(`/v1/conversations/${id}/assign`).set(acme.auth).send({ agentId }).expect(200);
      const mine = [await start(acme), await start(acme)];
      for (const conversation of mine) await assign(conversation.id, agent.agentId);
      const closed = await start(acme);
      await assign(closed.id, agent.agentId);
      await t.http.post(`/v1/conversations/${closed.id}/close`).set(acme.auth).send({}).expect(200);
      const theirs = await start(acme);
      await assign(theirs.id, other.agentId);

      await recorder.clear();
      const moved = await t.app.get(ConversationsService).requeueAgentConversations(acme.companyId, agent.agentId);
      expect(moved).toBe(2);
      const queued = await recorder.events();
      expect(queued.map((event) => event.type)).toEqual(['conversation.queued', 'conversation.queued']);
      expect(queued.map((event) => (event as DomainEvent<'conversation.queued'>).data.conversation.id)).toEqual(mine.map((conversation) => conversation.id));
      expect(queued.map((event) => (event as DomainEvent<'conversation.queued'>).data)).toEqual(
        mine.map(() => ({ conversation: expect.objectContaining({ status: 'queued' }), previousAgentId: agent.agentId })),
      );
      for (const conversation of mine) {
        expect(await stored(acme, conversation.id)).toMatchObject({
          status: 'queued',
          assignedAgentId: null,
          queuedAt: expect.any(Date),
        });
      }
      expect(await stored(acme, closed.id)).toMatchObject({ status: 'closed' });
      expect(await stored(acme, theirs.id)).toMatchObject({ status: 'human' });
      expect(await t.app.get(ConversationsService).requeueAgentConversations(globex.companyId, other.agentId)).toBe(0);
      expect(await stored(acme, theirs.id)).toMatchObject({ status: 'human' });
    });

    it('assign by a flow, setPriority, addTags and handOff', async () => {
      const service = t.app.get(ConversationsService);
      const conversation = await start(acme);
      await service.setPriority(acme.companyId, conversation.id, 'low');
      await service.addTags(acme.companyId, conversation.id, ['a', 'b']);
      const tagged = await service.addTags(acme.companyId, conversation.id, ['b', 'c']);
      expect(tagged).toMatchObject({ priority: 'low', tags: ['a', 'b', 'c'] });
      const queued = await service.handOff(acme.companyId, conversation.id);
      expect(queued.status).toBe('queued');
      const flowId = '6650f0c2a1b2c3d4e5f60799';
      const assigned = await service.assign(acme.companyId, conversation.id, acme.agentId, { kind: 'flow', id: flowId });
      expect(assigned).toMatchObject({ status: 'human', assignedBy: { kind: 'flow', id: flowId } });
      await expect(service.addTags(globex.companyId, conversation.id, ['x'])).rejects.toThrow('not found');
    });
  });
});
