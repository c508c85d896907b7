import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { type ConversationStatus } from '../../src/conversations/conversation.schema.js';
import { ConversationsRepository } from '../../src/conversations/conversations.repository.js';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { asSnapshot, conversationsSuite } from '../support/conversations.js';
import { addAgent } from '../support/factories.js';

describe('/v1/conversations: every transition, concurrent changes, the service for other modules', () => {
  const suite = conversationsSuite();
  const { start, stored, conversationIn } = suite;

  describe('every transition through the API', () => {
    const moves = {
      queued: (id: string) => suite.t.http.patch(`/v1/conversations/${id}`).set(suite.acme.auth).send({ status: 'queued' }),
      human: (id: string) => suite.t.http.post(`/v1/conversations/${id}/assign`).set(suite.acme.auth).send({ agentId: suite.acme.agentId }),
      closed: (id: string) => suite.t.http.post(`/v1/conversations/${id}/close`).set(suite.acme.auth).send({}),
    };
    // human → human is a reassignment: it is tried with another agent below.
    const table: [ConversationStatus, keyof typeof moves, boolean][] = [
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
      const record = await stored(suite.acme, conversation.id);
      expect(record?.status).toBe(allowed ? to : from);
      if (!allowed) expect(response.body.message).toMatch(new RegExp(`^Cannot move a conversation from ${from} to ${to}; allowed from ${from}: `));
    });

    it('human → human with another agent is a reassignment', async () => {
      const conversation = await conversationIn('human');
      const other = await addAgent(suite.t, suite.acme, 'agent');
      const response = await suite.t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(suite.acme.auth)
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
      const conversation = await start(suite.acme);
      const repository = suite.t.app.get(ConversationsRepository);
      const change = repository.change.bind(repository);
      // Another request closes the conversation between this request's read and its write.
      jest.spyOn(repository, 'change').mockImplementationOnce(async (...args) => {
        await suite.t.http.post(`/v1/conversations/${conversation.id}/close`).set(suite.acme.auth).send({}).expect(200);
        return change(...args);
      });
      const response = await suite.t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(suite.acme.auth)
        .send({ agentId: suite.acme.agentId })
        .expect(409);
      expect(response.body.message).toBe(
        `Conversation ${conversation.id} was changed by another request (it is now closed); read it again and retry`,
      );
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'closed', assignedAgentId: null });
      expect((await suite.recorder.events()).map((event) => event.type)).toEqual(['conversation.closed']);
    });

    it('computes a change again when only fields it does not rely on moved, so its event shows the record as stored', async () => {
      const conversation = await start(suite.acme);
      const repository = suite.t.app.get(ConversationsRepository);
      const change = repository.change.bind(repository);
      // A reply lands (lastMessageAt, firstResponseAt) between this request's read and its write.
      const spy = jest.spyOn(repository, 'change').mockImplementationOnce(async (...args) => {
        await suite.t.http.post(`/v1/conversations/${conversation.id}/messages`).set(suite.acme.auth).send({ text: 'One moment' }).expect(201);
        return change(...args);
      });
      const response = await suite.t.http.post(`/v1/conversations/${conversation.id}/assign`).set(suite.acme.auth).send({ agentId: suite.acme.agentId }).expect(200);
      expect(response.body).toMatchObject({ status: 'human', lastMessageAt: expect.any(String), firstResponseAt: expect.any(String) });
      const assigned = (await suite.recorder.events()).filter((event) => event.type === 'conversation.assigned');
      expect(assigned).toHaveLength(1);
      expect(assigned[0].data).toMatchObject({ conversation: asSnapshot(response.body) });
      // The first write missed the revision the reply made; the second, computed again, applied.
      expect(spy).toHaveBeenCalledTimes(2);
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'human', revision: 2 });
    });

    it('of concurrent closes exactly one applies and emits', async () => {
      const conversation = await start(suite.acme);
      await suite.recorder.clear();
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => suite.t.http.post(`/v1/conversations/${conversation.id}/close`).set(suite.acme.auth).send({})),
      );
      const statuses = responses.map((response) => response.status).sort();
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      for (const status of statuses.filter((code) => code !== 200)) expect([400, 409]).toContain(status);
      expect((await suite.recorder.events()).filter((event) => event.type === 'conversation.closed')).toHaveLength(1);
    });
  });

  describe('ConversationsService for other modules', () => {
    it('requeueAgentConversations moves the agent’s open human conversations back to the queue', async () => {
      const agent = await addAgent(suite.t, suite.acme, 'agent');
      const other = await addAgent(suite.t, suite.acme, 'agent');
      const assign = (id: string, agentId: string) =>
        suite.t.http.post(`/v1/conversations/${id}/assign`).set(suite.acme.auth).send({ agentId }).expect(200);
      const mine = [await start(suite.acme), await start(suite.acme)];
      for (const conversation of mine) await assign(conversation.id, agent.agentId);
      const closed = await start(suite.acme);
      await assign(closed.id, agent.agentId);
      await suite.t.http.post(`/v1/conversations/${closed.id}/close`).set(suite.acme.auth).send({}).expect(200);
      const theirs = await start(suite.acme);
      await assign(theirs.id, other.agentId);

      await suite.recorder.clear();
      const moved = await suite.t.app.get(ConversationsService).requeueAgentConversations(suite.acme.companyId, agent.agentId);
      expect(moved).toBe(2);
      const queued = await suite.recorder.events();
      expect(queued.map((event) => event.type)).toEqual(['conversation.queued', 'conversation.queued']);
      expect(queued.map((event) => (event as DomainEvent<'conversation.queued'>).data.conversation.id)).toEqual(mine.map((conversation) => conversation.id));
      expect(queued.map((event) => (event as DomainEvent<'conversation.queued'>).data)).toEqual(
        mine.map(() => ({ conversation: expect.objectContaining({ status: 'queued' }), previousAgentId: agent.agentId })),
      );
      for (const conversation of mine) {
        expect(await stored(suite.acme, conversation.id)).toMatchObject({
          status: 'queued',
          assignedAgentId: null,
          queuedAt: expect.any(Date),
        });
      }
      expect(await stored(suite.acme, closed.id)).toMatchObject({ status: 'closed' });
      expect(await stored(suite.acme, theirs.id)).toMatchObject({ status: 'human' });
      expect(await suite.t.app.get(ConversationsService).requeueAgentConversations(suite.globex.companyId, other.agentId)).toBe(0);
      expect(await stored(suite.acme, theirs.id)).toMatchObject({ status: 'human' });
    });

    it('assign by a flow, setPriority, addTags and handOff', async () => {
      const service = suite.t.app.get(ConversationsService);
      const conversation = await start(suite.acme);
      await service.setPriority(suite.acme.companyId, conversation.id, 'low');
      await service.addTags(suite.acme.companyId, conversation.id, ['a', 'b']);
      const tagged = await service.addTags(suite.acme.companyId, conversation.id, ['b', 'c']);
      expect(tagged).toMatchObject({ priority: 'low', tags: ['a', 'b', 'c'] });
      const queued = await service.handOff(suite.acme.companyId, conversation.id);
      expect(queued.status).toBe('queued');
      const flowId = '6650f0c2a1b2c3d4e5f60799';
      const assigned = await service.assign(suite.acme.companyId, conversation.id, suite.acme.agentId, { kind: 'flow', id: flowId });
      expect(assigned).toMatchObject({ status: 'human', assignedBy: { kind: 'flow', id: flowId } });
      await expect(service.addTags(suite.globex.companyId, conversation.id, ['x'])).rejects.toThrow('not found');
    });
  });
});
