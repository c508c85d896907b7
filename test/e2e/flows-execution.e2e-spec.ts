import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { FlowExecution } from '../../src/flows/flow-execution.schema.js';
import {
  addAgent,
  createApiKey,
  registerCompany,
  uniqueEmail,
  type TestAgentLogin,
  type TestCompany,
} from '../support/factories.js';
import { EventRecorder, settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Tenant extends TestCompany {
  key: string;
}

describe('flow execution and triggers', () => {
  let t: TestApp;
  let recorder: EventRecorder;

  beforeAll(async () => {
    t = await createTestApp();
    recorder = new EventRecorder(t);
  });
  beforeEach(async () => {
    await recorder.clear();
  });
  afterAll(() => t.close());

  const tenant = async (name: string): Promise<Tenant> => {
    const company = await registerCompany(t.http, name);
    return { ...company, key: await createApiKey(t.http, company, ['messages:write']) };
  };

  /** A customer's message through Interface B: answers the conversation it landed in. */
  const inbound = async (company: Tenant, text: string, email = uniqueEmail('customer')) => {
    const response = await t.http
      .post('/api/external/messages')
      .set('x-api-key', company.key)
      .send({ from: { email }, text })
      .expect(201);
    // Flows react to the message after it is answered.
    await settle(t);
    return { conversationId: response.body.data.conversation.id as string, email };
  };

  const createFlow = async (company: TestCompany, body: Record<string, unknown>): Promise<string> =>
    (await t.http.post('/v1/flows').set(company.auth).send(body).expect(201)).body.id;

  const conversation = async (company: TestCompany, id: string) =>
    (await t.http.get(`/v1/conversations/${id}`).set(company.auth).expect(200)).body;

  const messages = async (company: TestCompany, id: string) =>
    (await t.http.get(`/v1/conversations/${id}/messages`).set(company.auth).expect(200)).body.data as {
      direction: string;
      senderType: string;
      senderId: string | null;
      text: string;
    }[];

  const executions = (company: TestCompany, filter: Record<string, unknown> = {}) =>
    t.model<FlowExecution>(FlowExecution.name).find({ companyId: company.companyId, ...filter }).sort({ _id: 1 }).lean();

  describe('POST /v1/flows/:id/execute', () => {
    let acme: Tenant;
    let globex: Tenant;
    let worker: TestAgentLogin;

    beforeAll(async () => {
      acme = await tenant('Acme');
      globex = await tenant('Globex');
      worker = await addAgent(t, acme, 'agent');
    });

    it('runs every step type in order, with their effects and events, and records the run', async () => {
      const flowId = await createFlow(acme, {
        name: 'Everything',
        steps: [
          { type: 'send_message', text: 'Hello from the bot' },
          { type: 'set_priority', priority: 'high' },
          { type: 'add_tags', tags: ['vip', 'flow'] },
          { type: 'handoff' },
          { type: 'assign', agentId: worker.agentId },
          { type: 'close', reason: 'Solved by the flow' },
        ],
      });
      const { conversationId } = await inbound(acme, 'hi');
      await recorder.clear();

      const response = await t.http
        .post(`/v1/flows/${flowId}/execute`)
        .set(worker.auth)
        .send({ conversationId })
        .expect(200);
      expect(response.body).toEqual({
        executionId: expect.stringMatching(/^[0-9a-f]{24}$/),
        flowId,
        conversationId,
        status: 'completed',
        steps: ['send_message', 'set_priority', 'add_tags', 'handoff', 'assign', 'close'].map((type) => ({
          type,
          status: 'completed',
        })),
      });

      expect(await conversation(acme, conversationId)).toMatchObject({
        status: 'closed',
        priority: 'high',
        tags: expect.arrayContaining(['vip', 'flow']),
        assignedAgentId: worker.agentId,
        assignedBy: { kind: 'flow', id: flowId },
        closeReason: 'Solved by the flow',
      });
      const sent = (await messages(acme, conversationId)).filter((message) => message.direction === 'outbound');
      expect(sent).toEqual([
        expect.objectContaining({ text: 'Hello from the bot', senderType: 'bot', senderId: flowId }),
      ]);

      expect((await recorder.events()).map((event) => event.type)).toEqual([
        'message.sent',
        'conversation.priority_changed',
        // add_tags: tags changed (contract section 20).
        'conversation.updated',
        'conversation.queued',
        'conversation.assigned',
        'conversation.closed',
        'flow.executed',
      ]);
      expect((await recorder.events()).at(-1)).toMatchObject({ companyId: acme.companyId, data: { execution: response.body } });

      const [stored] = await executions(acme, { _id: response.body.executionId });
      expect(stored).toMatchObject({ status: 'completed', trigger: 'manual', steps: response.body.steps });
      expect(stored.flowId.toHexString()).toBe(flowId);
      expect(stored.conversationId.toHexString()).toBe(conversationId);
      expect(stored).toHaveProperty('createdAt', expect.any(Date));
    });

    it('add_tags normalizes like the API and fails past 50 tags on the conversation, changing nothing', async () => {
      const { conversationId } = await inbound(acme, 'hi');
      const existing = Array.from({ length: 48 }, (_, i) => `t${i}`);
      await t.http.patch(`/v1/conversations/${conversationId}`).set(acme.auth).send({ tags: existing }).expect(200);
      const fits = await createFlow(acme, { name: 'Fits', steps: [{ type: 'add_tags', tags: [' vip ', 'vip', 't0', 'new'] }] });
      const fitted = await t.http.post(`/v1/flows/${fits}/execute`).set(acme.auth).send({ conversationId }).expect(200);
      expect(fitted.body).toMatchObject({ status: 'completed' });
      expect((await conversation(acme, conversationId)).tags).toEqual([...existing, 'vip', 'new']);

      const overflows = await createFlow(acme, { name: 'Overflows', steps: [{ type: 'add_tags', tags: ['one-more'] }] });
      const failed = await t.http.post(`/v1/flows/${overflows}/execute`).set(acme.auth).send({ conversationId }).expect(200);
      expect(failed.body).toMatchObject({
        status: 'failed',
        steps: [{ type: 'add_tags', status: 'failed', error: expect.stringMatching(/at most 50 tags/) }],
      });
      expect((await conversation(acme, conversationId)).tags).toHaveLength(50);
    });

    it('stops at the first failing step, skips the rest, and still records and publishes the run', async () => {
      const flowId = await createFlow(acme, {
        name: 'Fails',
        steps: [
          { type: 'add_tags', tags: ['before'] },
          { type: 'close' },
          { type: 'send_message', text: 'too late' },
          { type: 'set_priority', priority: 'low' },
        ],
      });
      const { conversationId } = await inbound(acme, 'hi');
      await recorder.clear();
      const response = await t.http.post(`/v1/flows/${flowId}/execute`).set(acme.auth).send({ conversationId }).expect(200);
      expect(response.body).toMatchObject({
        status: 'failed',
        steps: [
          { type: 'add_tags', status: 'completed' },
          { type: 'close', status: 'completed' },
          { type: 'send_message', status: 'failed', error: expect.stringMatching(/closed/) },
          { type: 'set_priority', status: 'skipped' },
        ],
      });
      expect(response.body.steps[3]).not.toHaveProperty('error');
      expect(await conversation(acme, conversationId)).toMatchObject({ status: 'closed', priority: 'medium', tags: ['before'] });
      expect((await messages(acme, conversationId)).some((message) => message.text === 'too late')).toBe(false);
      const [stored] = await executions(acme, { _id: response.body.executionId });
      expect(stored.status).toBe('failed');
      expect((await recorder.events()).filter((event) => event.type === 'flow.executed')).toHaveLength(1);
      expect((await recorder.events()).at(-1)).toMatchObject({ type: 'flow.executed', data: { execution: { status: 'failed' } } });
    });

    it('fails an assign step whose agent was deactivated, leaving the conversation as it was', async () => {
      const gone = await addAgent(t, acme, 'agent');
      const flowId = await createFlow(acme, { name: 'To gone', steps: [{ type: 'assign', agentId: gone.agentId }, { type: 'handoff' }] });
      await t.http.delete(`/v1/agents/${gone.agentId}`).set(acme.auth).expect(200);
      const { conversationId } = await inbound(acme, 'hi');
      const response = await t.http.post(`/v1/flows/${flowId}/execute`).set(acme.auth).send({ conversationId }).expect(200);
      expect(response.body.steps).toEqual([
        { type: 'assign', status: 'failed', error: expect.stringMatching(/deactivated/) },
        { type: 'handoff', status: 'skipped' },
      ]);
      expect(await conversation(acme, conversationId)).toMatchObject({ status: 'bot', assignedAgentId: null });
    });

    it('refuses an inactive flow, a closed, foreign, missing or malformed conversation with 400', async () => {
      const inactive = await createFlow(acme, { name: 'Off', isActive: false, steps: [{ type: 'add_tags', tags: ['x'] }] });
      const active = await createFlow(acme, { name: 'On', steps: [{ type: 'add_tags', tags: ['ran'] }] });
      const { conversationId } = await inbound(acme, 'hi');
      const foreign = await inbound(globex, 'hi');
      const before = (await executions(acme)).length;

      const off = await t.http.post(`/v1/flows/${inactive}/execute`).set(acme.auth).send({ conversationId }).expect(400);
      expect(off.body.message).toMatch(/inactive/);

      const other = await t.http
        .post(`/v1/flows/${active}/execute`)
        .set(acme.auth)
        .send({ conversationId: foreign.conversationId })
        .expect(400);
      expect(other.body.errors).toEqual([{ field: 'conversationId', message: `conversation ${foreign.conversationId} not found` }]);
      expect((await conversation(globex, foreign.conversationId)).tags).toEqual([]);

      for (const body of [{}, { conversationId: 'nope' }, { conversationId: 42 }, { conversationId: { $ne: null } }, { conversationId, extra: 1 }]) {
        await t.http.post(`/v1/flows/${active}/execute`).set(acme.auth).send(body).expect(400);
      }
      await t.http.post(`/v1/conversations/${conversationId}/close`).set(acme.auth).send({}).expect(200);
      const closed = await t.http.post(`/v1/flows/${active}/execute`).set(acme.auth).send({ conversationId }).expect(400);
      expect(closed.body.message).toMatch(/closed/);
      await t.http.post(`/v1/flows/${'0'.repeat(24)}/execute`).set(acme.auth).send({ conversationId }).expect(404);

      expect(await executions(acme)).toHaveLength(before);
      expect((await conversation(acme, conversationId)).tags).toEqual([]);
    });

    it('assign without an agent chooses one by strategy within capacity, or fails when all are full', async () => {
      const company = await tenant('Staffed');
      await t.http.patch(`/v1/agents/${company.agentId}`).set(company.auth).send({ status: 'offline' }).expect(200);
      const first = await addAgent(t, company, 'agent');
      const second = await addAgent(t, company, 'agent');
      const busy = await inbound(company, 'hi');
      await t.http.post(`/v1/conversations/${busy.conversationId}/assign`).set(company.auth).send({ agentId: first.agentId }).expect(200);

      const leastBusy = await createFlow(company, { name: 'least', steps: [{ type: 'assign', strategy: 'least_busy' }] });
      const byDefault = await createFlow(company, { name: 'default', steps: [{ type: 'assign' }] });
      const run = async (flowId: string) => {
        const { conversationId } = await inbound(company, 'hi');
        const response = await t.http.post(`/v1/flows/${flowId}/execute`).set(company.auth).send({ conversationId }).expect(200);
        return { body: response.body, conversation: await conversation(company, conversationId) };
      };

      expect((await run(leastBusy)).conversation).toMatchObject({ status: 'human', assignedAgentId: second.agentId });
      // round_robin (the company's default strategy): the agent chosen least recently, here never.
      expect((await run(byDefault)).conversation).toMatchObject({ status: 'human', assignedAgentId: first.agentId });

      await t.http.patch('/v1/settings').set(company.auth).send({ autoAssignment: { maxConversationsPerAgent: 1 } }).expect(200);
      const full = await run(byDefault);
      expect(full.body).toMatchObject({
        status: 'failed',
        steps: [{ type: 'assign', status: 'failed', error: expect.stringMatching(/No agent is available/) }],
      });
      expect(full.conversation).toMatchObject({ status: 'bot', assignedAgentId: null });
    });
  });

  describe('inbound_message triggers', () => {
    it('runs matching active flows on a bot conversation: keywords as whole words, or always without keywords', async () => {
      const company = await tenant('Triggered');
      const pricing = await createFlow(company, {
        name: 'Pricing',
        trigger: { type: 'inbound_message', keywords: ['pricing', 'how much'] },
        steps: [
          { type: 'send_message', text: 'Plans start at $10/month.' },
          { type: 'add_tags', tags: ['sales'] },
        ],
      });
      const always = await createFlow(company, {
        name: 'Seen',
        trigger: { type: 'inbound_message' },
        steps: [{ type: 'add_tags', tags: ['seen'] }],
      });
      await createFlow(company, {
        name: 'Inactive',
        isActive: false,
        trigger: { type: 'inbound_message' },
        steps: [{ type: 'add_tags', tags: ['inactive'] }],
      });
      await createFlow(company, { name: 'Manual', steps: [{ type: 'add_tags', tags: ['manual'] }] });

      const { conversationId, email } = await inbound(company, 'Hello, I like your repricing');
      expect((await conversation(company, conversationId)).tags).toEqual(['seen']);
      expect((await executions(company)).map((run) => [run.flowId.toHexString(), run.trigger, run.status])).toEqual([
        [always, 'inbound_message', 'completed'],
      ]);

      await recorder.clear();
      await inbound(company, 'So, HOW   MUCH is the Pricing?', email);
      expect((await conversation(company, conversationId)).tags).toEqual(['seen', 'sales']);
      const runs = await executions(company);
      expect(runs.map((run) => run.flowId.toHexString())).toEqual([always, pricing, always]);
      expect((await recorder.events()).filter((event) => event.type === 'flow.executed')).toHaveLength(2);

      // The bot's own reply is outbound: it triggers nothing, so each customer message ran each flow once.
      const bot = (await messages(company, conversationId)).filter((message) => message.senderType === 'bot');
      expect(bot).toEqual([expect.objectContaining({ text: 'Plans start at $10/month.', senderId: pricing })]);
    });

    it('follows a flow changed or turned off between two messages (the flows kept in memory are never stale)', async () => {
      const company = await tenant('Edited');
      const tagOn = (tag: string, keyword: string) => ({
        name: 'Tagger',
        trigger: { type: 'inbound_message', keywords: [keyword] },
        steps: [{ type: 'add_tags', tags: [tag] }],
      });
      const flowId = await createFlow(company, tagOn('first', 'apple'));
      const { conversationId, email } = await inbound(company, 'an apple');
      expect((await conversation(company, conversationId)).tags).toEqual(['first']);

      await t.http.put(`/v1/flows/${flowId}`).set(company.auth).send(tagOn('second', 'pear')).expect(200);
      await inbound(company, 'an apple again', email);
      expect((await conversation(company, conversationId)).tags).toEqual(['first']);
      await inbound(company, 'a pear', email);
      expect((await conversation(company, conversationId)).tags).toEqual(['first', 'second']);

      await t.http.put(`/v1/flows/${flowId}`).set(company.auth).send({ ...tagOn('third', 'pear'), isActive: false }).expect(200);
      await inbound(company, 'another pear', email);
      expect((await conversation(company, conversationId)).tags).toEqual(['first', 'second']);
    });

    it('stops once a flow takes the conversation out of bot, and runs nothing on queued or human conversations', async () => {
      const company = await tenant('Handoff');
      const handoff = await createFlow(company, {
        name: 'Hand off',
        trigger: { type: 'inbound_message', keywords: ['human'] },
        steps: [{ type: 'handoff' }],
      });
      await createFlow(company, {
        name: 'Later',
        trigger: { type: 'inbound_message' },
        steps: [{ type: 'send_message', text: 'the bot again' }],
      });
      const { conversationId, email } = await inbound(company, 'I want a human');
      expect((await conversation(company, conversationId)).status).toBe('queued');
      expect((await executions(company)).map((run) => run.flowId.toHexString())).toEqual([handoff]);

      await inbound(company, 'hello? human?', email);
      expect(await executions(company)).toHaveLength(1);
      expect((await messages(company, conversationId)).filter((message) => message.senderType === 'bot')).toEqual([]);
    });

    it('runs at most ten flows for one message', async () => {
      const company = await tenant('Busy');
      for (let index = 0; index < 12; index += 1) {
        await createFlow(company, {
          name: `tagger ${index}`,
          trigger: { type: 'inbound_message' },
          steps: [{ type: 'add_tags', tags: [`t${index}`] }],
        });
      }
      const { conversationId } = await inbound(company, 'hi');
      expect(await executions(company)).toHaveLength(10);
      expect((await conversation(company, conversationId)).tags).toEqual(Array.from({ length: 10 }, (_, index) => `t${index}`));
    });

    it('runs only the company’s own flows', async () => {
      const owner = await tenant('Owner');
      const stranger = await tenant('Stranger');
      await createFlow(owner, { name: 'Mine', trigger: { type: 'inbound_message' }, steps: [{ type: 'add_tags', tags: ['owner'] }] });
      const { conversationId } = await inbound(stranger, 'hi');
      expect((await conversation(stranger, conversationId)).tags).toEqual([]);
      expect(await executions(stranger)).toHaveLength(0);
      expect(await executions(owner)).toHaveLength(0);
    });
  });
});
