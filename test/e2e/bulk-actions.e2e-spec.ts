import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { ConflictException } from '@nestjs/common';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { ConversationsService } from '../../src/conversations/conversations.service.js';
import { MAX_BULK_IDS } from '../../src/conversations/dto/bulk-conversations.dto.js';
import { conversationsSuite } from '../support/conversations.js';
import { addAgent } from '../support/factories.js';

/** POST /v1/conversations/bulk (contract section 15): each id through its single route's rules and events. */
describe('POST /v1/conversations/bulk', () => {
  const suite = conversationsSuite();
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const bulk = (body: Record<string, unknown>, auth = suite.acme.auth) => suite.t.http.post('/v1/conversations/bulk').set(auth).send(body);
  const storedAll = (ids: string[]) =>
    suite.t.model<Conversation>(Conversation.name).find({ companyId: suite.acme.companyId, _id: { $in: ids } }).lean();
  const typesOf = async () => (await suite.recorder.events()).map((event) => [event.type, (event.data as { conversation: { id: string } }).conversation.id]);

  it('assigns each conversation, answering per id in the order given, with the single route’s statuses and words', async () => {
    const bot = await suite.conversationIn('bot');
    const queued = await suite.conversationIn('queued');
    const closed = await suite.conversationIn('closed');
    const foreign = await suite.start(suite.globex);
    const agent = await addAgent(suite.t, suite.acme, 'agent');
    await suite.recorder.clear();

    const ids = [queued.id, foreign.id, bot.id, closed.id, 'not-an-id'];
    const response = await bulk({ ids, action: 'assign', agentId: agent.agentId }).expect(200);
    expect(response.body).toEqual({
      results: [
        { id: queued.id, ok: true, status: 200, conversation: expect.objectContaining({ id: queued.id, status: 'human', assignedAgentId: agent.agentId, contact: expect.any(Object) }) },
        { id: foreign.id, ok: false, status: 404, error: `Conversation ${foreign.id} not found` },
        { id: bot.id, ok: true, status: 200, conversation: expect.objectContaining({ id: bot.id, status: 'human', assignedAgentId: agent.agentId }) },
        { id: closed.id, ok: false, status: 400, error: 'Cannot move a conversation from closed to human; allowed from closed: none (closed conversations are never reopened)' },
        { id: 'not-an-id', ok: false, status: 404, error: 'Conversation not-an-id not found' },
      ],
    });
    // The single route answers the same for the closed one.
    const single = await suite.t.http.post(`/v1/conversations/${closed.id}/assign`).set(suite.acme.auth).send({ agentId: agent.agentId }).expect(400);
    expect(single.body.detail).toBe(response.body.results[3].error);
    await suite.recorder.clear();
    expect((await suite.stored(suite.globex, foreign.id))?.status).toBe('bot');
  });

  it('emits each conversation’s events as the single route does, one per changed conversation', async () => {
    const one = await suite.conversationIn('queued');
    const two = await suite.conversationIn('human');
    const agent = await addAgent(suite.t, suite.acme, 'agent');
    await suite.recorder.clear();
    await bulk({ ids: [one.id, two.id], action: 'assign', agentId: agent.agentId }).expect(200);
    const events = await suite.recorder.events();
    expect(events.map((event) => [event.type, (event.data as { conversation: { id: string } }).conversation.id])).toEqual([
      ['conversation.assigned', one.id],
      ['conversation.assigned', two.id],
    ]);
    expect(events[1].data).toMatchObject({ agentId: agent.agentId, previousAgentId: suite.acme.agentId });
  });

  it('closes with a reason, each with conversation.closed; an already closed one answers 400', async () => {
    const one = await suite.conversationIn('human');
    const two = await suite.conversationIn('bot');
    const done = await suite.conversationIn('closed');
    const response = await bulk({ ids: [one.id, two.id, done.id], action: 'close', reason: 'Outage over' }).expect(200);
    expect(response.body.results.map((result: { status: number }) => result.status)).toEqual([200, 200, 400]);
    expect(response.body.results[2].error).toBe('Cannot move a conversation from closed to closed; allowed from closed: none (closed conversations are never reopened)');
    const stored = await storedAll([one.id, two.id]);
    expect(stored.map((conversation) => [conversation.status, conversation.closeReason])).toEqual([
      ['closed', 'Outage over'],
      ['closed', 'Outage over'],
    ]);
    expect(await typesOf()).toEqual([
      ['conversation.closed', one.id],
      ['conversation.closed', two.id],
    ]);
  });

  it('sets priorities and adds tags (closed conversations included, as the single routes allow)', async () => {
    const one = await suite.conversationIn('human');
    const closed = await suite.conversationIn('closed');
    await suite.t.http.patch(`/v1/conversations/${one.id}`).set(suite.acme.auth).send({ tags: ['vip'] }).expect(200);
    const priorities = await bulk({ ids: [one.id, closed.id], action: 'set_priority', priority: 'high' }).expect(200);
    expect(priorities.body.results.map((result: { conversation: { priority: string } }) => result.conversation.priority)).toEqual(['high', 'high']);
    const tagged = await bulk({ ids: [one.id, closed.id], action: 'add_tags', tags: ['outage', ' vip '] }).expect(200);
    expect(tagged.body.results.map((result: { conversation: { tags: string[] } }) => result.conversation.tags)).toEqual([['vip', 'outage'], ['outage', 'vip']]);
    const stored = await storedAll([one.id]);
    expect(stored[0]).toMatchObject({ priority: 'high', tags: ['vip', 'outage'] });
    const [storedClosed] = await storedAll([closed.id]);
    expect(storedClosed).toMatchObject({ status: 'closed', priority: 'high', tags: ['outage', 'vip'] });
  });

  it('snoozes each conversation that may sleep, answering 400 for the others', async () => {
    const human = await suite.conversationIn('human');
    const bot = await suite.conversationIn('bot');
    const until = new Date(Date.now() + 3_600_000).toISOString();
    const response = await bulk({ ids: [human.id, bot.id], action: 'snooze', until }).expect(200);
    expect(response.body.results).toEqual([
      { id: human.id, ok: true, status: 200, conversation: expect.objectContaining({ snoozedUntil: until, status: 'human' }) },
      { id: bot.id, ok: false, status: 400, error: 'Only human or queued conversations can be snoozed; this one is bot' },
    ]);
    expect(await typesOf()).toEqual([['conversation.snoozed', human.id]]);
  });

  it('reports a concurrent change as the single route would: 409, and goes on with the others', async () => {
    const one = await suite.conversationIn('queued');
    const two = await suite.conversationIn('queued');
    const conversations = suite.t.app.get(ConversationsService);
    const assign = conversations.assign.bind(conversations);
    jest.spyOn(conversations, 'assign').mockImplementation(async (companyId, id, ...rest) => {
      if (id === one.id) throw new ConflictException(`Conversation ${id} was changed by another request (it is now human); read it again and retry`);
      return assign(companyId, id, ...rest);
    });
    const response = await bulk({ ids: [one.id, two.id], action: 'assign', agentId: suite.acme.agentId }).expect(200);
    expect(response.body.results.map((result: { status: number; ok: boolean }) => [result.status, result.ok])).toEqual([
      [409, false],
      [200, true],
    ]);
  });

  it('answers an agent that is not the company’s with a 400 per id, as the single route does', async () => {
    const one = await suite.conversationIn('queued');
    const response = await bulk({ ids: [one.id], action: 'assign', agentId: suite.globex.agentId }).expect(200);
    expect(response.body.results).toEqual([{ id: one.id, ok: false, status: 400, error: 'agent not found' }]);
  });

  it.each([
    ['assign without agentId', { action: 'assign' }, [{ field: 'agentId', message: 'agentId is required for action assign' }]],
    ['set_priority without priority', { action: 'set_priority' }, [{ field: 'priority', message: 'priority is required for action set_priority' }]],
    ['add_tags without tags', { action: 'add_tags' }, [{ field: 'tags', message: 'tags is required for action add_tags' }]],
    ['add_tags with blank tags only', { action: 'add_tags', tags: [' '] }, [{ field: 'tags', message: 'tags must list at least one tag' }]],
    ['snooze without until', { action: 'snooze' }, [{ field: 'until', message: 'until is required for action snooze' }]],
    ['snooze until the past', { action: 'snooze', until: '2020-01-01T00:00:00Z' }, [{ field: 'until', message: 'until must be in the future' }]],
    ['a field of another action', { action: 'close', priority: 'high' }, [{ field: 'priority', message: 'priority does not apply to action close' }]],
    ['a reason with assign', { action: 'assign', agentId: '6650f0c2a1b2c3d4e5f60701', reason: 'x' }, [{ field: 'reason', message: 'reason does not apply to action assign' }]],
    ['an unknown action', { action: 'reopen' }, [{ field: 'action', message: expect.stringContaining('action must be one of') }]],
    ['no ids', { ids: [], action: 'close' }, [{ field: 'ids', message: 'ids must contain at least 1 elements' }]],
    ['a repeated id', { ids: ['a', 'a'], action: 'close' }, [{ field: 'ids', message: 'ids must not repeat an id' }]],
    [`more than ${MAX_BULK_IDS} ids`, { ids: Array.from({ length: MAX_BULK_IDS + 1 }, (_, index) => `id${index}`), action: 'close' }, [{ field: 'ids', message: `ids must contain no more than ${MAX_BULK_IDS} elements` }]],
  ])('refuses %s with a 400 for the whole request, changing nothing', async (_, body, errors) => {
    const one = await suite.conversationIn('queued');
    const before = await suite.stored(suite.acme, one.id);
    const response = await bulk({ ids: [one.id], ...body }).expect(400);
    expect(response.body.errors).toEqual(errors);
    expect(await suite.stored(suite.acme, one.id)).toEqual(before);
    expect(await suite.recorder.events()).toEqual([]);
  });

  it('lets any agent act in bulk on the company’s conversations only', async () => {
    const agent = await addAgent(suite.t, suite.acme, 'agent');
    const one = await suite.conversationIn('queued');
    const theirs = await suite.start(suite.globex);
    const response = await bulk({ ids: [one.id, theirs.id], action: 'set_priority', priority: 'low' }, agent.auth).expect(200);
    expect(response.body.results.map((result: { status: number }) => result.status)).toEqual([200, 404]);
    expect((await suite.stored(suite.globex, theirs.id))?.priority).toBe('medium');
  });

  it('acts on 100 conversations in one request', async () => {
    const ids: string[] = [];
    for (let batch = 0; batch < MAX_BULK_IDS; batch += 20) {
      ids.push(...(await Promise.all(Array.from({ length: 20 }, () => suite.start(suite.acme)))).map((conversation) => conversation.id));
    }
    await suite.recorder.clear();
    const response = await bulk({ ids, action: 'close' }).expect(200);
    expect(response.body.results.map((result: { id: string }) => result.id)).toEqual(ids);
    expect(response.body.results.every((result: { ok: boolean }) => result.ok)).toBe(true);
    expect((await suite.recorder.events()).filter((event) => event.type === 'conversation.closed')).toHaveLength(MAX_BULK_IDS);
  });
});
