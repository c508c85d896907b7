import { describe, expect, it } from '@jest/globals';
import { asSnapshot, conversationsSuite } from '../support/conversations.js';
import { addAgent } from '../support/factories.js';
import { loggedEvent } from '../support/event-log.js';

describe('/v1/conversations/:id: assign, close, update', () => {
  const suite = conversationsSuite();
  const { start, stored, deactivate, conversationIn } = suite;

  describe('POST /v1/conversations/:id/assign', () => {
    it('assigns a bot conversation to an agent: human, assignedAgentId, one conversation.assigned', async () => {
      const conversation = await start(suite.acme);
      const agent = await addAgent(suite.t, suite.acme, 'agent');
      await suite.recorder.clear();
      const response = await suite.t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(suite.acme.auth)
        .send({ agentId: agent.agentId })
        .expect(200);
      expect(response.body).toMatchObject({
        id: conversation.id,
        status: 'human',
        assignedAgentId: agent.agentId,
        assignedAt: expect.any(String),
        assignedBy: { kind: 'agent', id: suite.acme.agentId },
      });
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'human', isOpen: true });
      expect(await suite.recorder.events()).toEqual([
        expect.objectContaining({
          type: 'conversation.assigned',
          companyId: suite.acme.companyId,
          data: { conversation: asSnapshot(response.body), agentId: agent.agentId, previousAgentId: null },
        }),
      ]);
    });

    it('reassigns a human conversation (status stays human, event again) and ignores the same agent', async () => {
      const conversation = await start(suite.acme);
      const first = await addAgent(suite.t, suite.acme, 'agent');
      const second = await addAgent(suite.t, suite.acme, 'supervisor');
      const path = `/v1/conversations/${conversation.id}/assign`;
      await suite.t.http.post(path).set(first.auth).send({ agentId: first.agentId }).expect(200);
      await suite.recorder.clear();

      const reassigned = await suite.t.http.post(path).set(first.auth).send({ agentId: second.agentId }).expect(200);
      expect(reassigned.body).toMatchObject({ status: 'human', assignedAgentId: second.agentId });
      expect(reassigned.body.assignedBy).toEqual({ kind: 'agent', id: first.agentId });
      expect(await suite.recorder.events()).toEqual([
        expect.objectContaining({
          type: 'conversation.assigned',
          data: { conversation: asSnapshot(reassigned.body), agentId: second.agentId, previousAgentId: first.agentId },
        }),
      ]);

      await suite.recorder.clear();
      const again = await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: second.agentId }).expect(200);
      expect(again.body).toEqual(reassigned.body);
      expect(await suite.recorder.events()).toEqual([]);
    });

    it('answers 400 for an inactive, foreign, unknown or malformed agent, naming the problem', async () => {
      const conversation = await start(suite.acme);
      const path = `/v1/conversations/${conversation.id}/assign`;
      const inactive = await addAgent(suite.t, suite.acme, 'agent');
      await deactivate(suite.acme, inactive.agentId);

      const deactivated = await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: inactive.agentId }).expect(400);
      expect(deactivated.body.errors).toEqual([
        { field: 'agentId', message: 'agent is deactivated and cannot be assigned conversations' },
      ]);
      const foreign = await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: suite.globex.agentId }).expect(400);
      expect(foreign.body.errors).toEqual([{ field: 'agentId', message: 'agent not found' }]);
      await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: '6650f0c2a1b2c3d4e5f60718' }).expect(400);
      const malformed = await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: 'ada' }).expect(400);
      expect(malformed.body.errors).toEqual([{ field: 'agentId', message: 'agentId must be a 24-character hex id' }]);
      await suite.t.http.post(path).set(suite.acme.auth).send({}).expect(400);
      await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: { $gt: '' } }).expect(400);
      await suite.t.http.post(path).set(suite.acme.auth).send({ agentId: suite.acme.agentId, force: true }).expect(400);

      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'bot', assignedAgentId: null });
      expect(await suite.recorder.events()).toEqual([]);
    });

    it('answers 404 for another company’s conversation and leaves it alone', async () => {
      const conversation = await start(suite.acme);
      await suite.t.http
        .post(`/v1/conversations/${conversation.id}/assign`)
        .set(suite.globex.auth)
        .send({ agentId: suite.globex.agentId })
        .expect(404);
      await suite.t.http.post('/v1/conversations/nope/assign').set(suite.acme.auth).send({ agentId: suite.acme.agentId }).expect(404);
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'bot', assignedAgentId: null });
      expect(await suite.recorder.events()).toEqual([]);
    });
  });

  describe('POST /v1/conversations/:id/close', () => {
    it('closes with a reason and emits conversation.closed once', async () => {
      const conversation = await start(suite.acme);
      const response = await suite.t.http
        .post(`/v1/conversations/${conversation.id}/close`)
        .set(suite.acme.auth)
        .send({ reason: 'Resolved: refund issued' })
        .expect(200);
      expect(response.body).toMatchObject({
        status: 'closed',
        closedAt: expect.any(String),
        closeReason: 'Resolved: refund issued',
      });
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'closed', isOpen: false });
      expect(await suite.recorder.events()).toEqual([
        expect.objectContaining({
          type: 'conversation.closed',
          companyId: suite.acme.companyId,
          data: { conversation: asSnapshot(response.body), reason: 'Resolved: refund issued' },
        }),
      ]);
    });

    it('closes without a body, keeping the agent it had', async () => {
      const conversation = await conversationIn('human');
      const response = await suite.t.http.post(`/v1/conversations/${conversation.id}/close`).set(suite.acme.auth).expect(200);
      expect(response.body).toMatchObject({ status: 'closed', closeReason: null, assignedAgentId: suite.acme.agentId });
      expect((await suite.recorder.events()).map((event) => event.type)).toEqual(['conversation.closed']);
      expect((await suite.recorder.events())[0].data).toEqual({ conversation: asSnapshot(response.body), reason: null });
    });

    it('never reopens: a second close is a 400 naming the rule', async () => {
      const conversation = await conversationIn('closed');
      const response = await suite.t.http.post(`/v1/conversations/${conversation.id}/close`).set(suite.acme.auth).send({}).expect(400);
      expect(response.body.message).toBe(
        "Cannot move a conversation from closed to closed; allowed from closed: none (closed conversations are never reopened)",
      );
      expect(await suite.recorder.events()).toEqual([]);
    });

    it('answers 400 for a bad reason and 404 for a foreign conversation', async () => {
      const conversation = await start(suite.acme);
      const path = `/v1/conversations/${conversation.id}/close`;
      await suite.t.http.post(path).set(suite.acme.auth).send({ reason: '' }).expect(400);
      await suite.t.http.post(path).set(suite.acme.auth).send({ reason: 7 }).expect(400);
      await suite.t.http.post(path).set(suite.acme.auth).send({ reason: { $ne: null } }).expect(400);
      await suite.t.http.post(path).set(suite.acme.auth).send({ reason: 'x'.repeat(501) }).expect(400);
      await suite.t.http.post(path).set(suite.globex.auth).send({}).expect(404);
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'bot', isOpen: true, closedAt: null });
      expect(await suite.recorder.events()).toEqual([]);
    });
  });

  describe('PATCH /v1/conversations/:id', () => {
    it('changes priority, tags (trimmed, without blanks or duplicates) and subject; null clears the subject', async () => {
      const conversation = await start(suite.acme, { subject: 'Old subject' });
      const path = `/v1/conversations/${conversation.id}`;
      const response = await suite.t.http
        .patch(path)
        .set(suite.acme.auth)
        .send({ priority: 'high', tags: [' vip', 'billing', 'vip', ''], subject: 'Refund' })
        .expect(200);
      expect(response.body).toMatchObject({ priority: 'high', tags: ['vip', 'billing'], subject: 'Refund', status: 'bot' });
      const cleared = await suite.t.http.patch(path).set(suite.acme.auth).send({ subject: null, tags: [] }).expect(200);
      expect(cleared.body).toMatchObject({ subject: null, tags: [], priority: 'high' });
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ subject: null, tags: [], priority: 'high' });
      const unchanged = await suite.t.http.patch(path).set(suite.acme.auth).send({}).expect(200);
      expect(unchanged.body).toEqual(cleared.body);
      // The new priority (SLA policies match again on it), once; tags and subject as conversation.updated with their
      // changes (contract section 20); nothing changed, no event.
      const at = (body: { updatedAt: string }) => new Date(body.updatedAt);
      expect(await suite.recorder.events()).toEqual([
        loggedEvent('conversation.priority_changed', suite.acme.companyId, at(response.body), { conversation: asSnapshot(response.body), previousPriority: 'medium' }),
        loggedEvent('conversation.updated', suite.acme.companyId, at(response.body), {
          conversation: asSnapshot(response.body),
          changes: { subject: ['Old subject', 'Refund'], tags: [[], ['vip', 'billing']] },
        }),
        loggedEvent('conversation.updated', suite.acme.companyId, at(cleared.body), {
          conversation: asSnapshot(cleared.body),
          changes: { subject: ['Refund', null], tags: [['vip', 'billing'], []] },
        }),
      ]);
    });

    it('hands a bot conversation off to the queue, setting queuedAt, with conversation.queued once', async () => {
      const conversation = await start(suite.acme);
      const response = await suite.t.http
        .patch(`/v1/conversations/${conversation.id}`)
        .set(suite.acme.auth)
        .send({ status: 'queued' })
        .expect(200);
      expect(response.body).toMatchObject({ status: 'queued', queuedAt: expect.any(String), assignedAgentId: null });
      expect(await suite.recorder.events()).toEqual([
        loggedEvent('conversation.queued', suite.acme.companyId, new Date(response.body.updatedAt), { conversation: asSnapshot(response.body), previousAgentId: null }),
      ]);
    });

    it('unassigns a human conversation back to the queue', async () => {
      const conversation = await conversationIn('human');
      const response = await suite.t.http
        .patch(`/v1/conversations/${conversation.id}`)
        .set(suite.acme.auth)
        .send({ status: 'queued', priority: 'high' })
        .expect(200);
      expect(response.body).toMatchObject({
        status: 'queued',
        priority: 'high',
        assignedAgentId: null,
        assignedAt: null,
        assignedBy: null,
        queuedAt: expect.any(String),
      });
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'queued', assignedAgentId: null });
      const [changed, queued] = await suite.recorder.events();
      expect(changed).toMatchObject({ type: 'conversation.priority_changed', data: { conversation: asSnapshot(response.body), previousPriority: 'medium' } });
      expect(queued).toMatchObject({ type: 'conversation.queued', data: { conversation: asSnapshot(response.body), previousAgentId: expect.any(String) } });
    });

    it('labels a closed conversation but does not move it', async () => {
      const conversation = await conversationIn('closed');
      const path = `/v1/conversations/${conversation.id}`;
      const labelled = await suite.t.http.patch(path).set(suite.acme.auth).send({ tags: ['churn-risk'] }).expect(200);
      expect(labelled.body).toMatchObject({ status: 'closed', tags: ['churn-risk'] });
      const moved = await suite.t.http.patch(path).set(suite.acme.auth).send({ status: 'queued', priority: 'low' }).expect(400);
      expect(moved.body.message).toBe(
        'Cannot move a conversation from closed to queued; allowed from closed: none (closed conversations are never reopened)',
      );
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ status: 'closed', priority: 'medium' });
    });

    it('accepts status only as queued', async () => {
      const conversation = await start(suite.acme);
      for (const status of ['human', 'closed', 'bot', 'open', null]) {
        const response = await suite.t.http.patch(`/v1/conversations/${conversation.id}`).set(suite.acme.auth).send({ status });
        expect({ status, code: response.status }).toEqual({ status, code: 400 });
        expect(response.body.errors).toEqual([
          { field: 'status', message: 'status may only be set to queued here; assign or close through their own routes' },
        ]);
      }
    });

    it('answers 400 for wrong types, unknown fields and operators; 404 for foreign or malformed ids', async () => {
      const conversation = await start(suite.acme);
      const path = `/v1/conversations/${conversation.id}`;
      const cases: Record<string, unknown>[] = [
        { priority: 'urgent' },
        { priority: null },
        { tags: 'vip' },
        { tags: null },
        { tags: ['t'.repeat(51)] },
        { tags: [42] },
        { tags: Array.from({ length: 51 }, (_, index) => `t${index}`) },
        { subject: '' },
        { assignedAgentId: suite.acme.agentId },
        { tags: { $each: ['vip'] } },
        { $set: { status: 'closed' } },
      ];
      for (const body of cases) {
        const response = await suite.t.http.patch(path).set(suite.acme.auth).send(body);
        expect({ body, status: response.status }).toEqual({ body, status: 400 });
      }
      await suite.t.http.patch(path).set(suite.globex.auth).send({ priority: 'high' }).expect(404);
      await suite.t.http.patch('/v1/conversations/zzz').set(suite.acme.auth).send({ priority: 'high' }).expect(404);
      expect(await stored(suite.acme, conversation.id)).toMatchObject({ priority: 'medium', tags: [], status: 'bot' });
    });
  });
});
