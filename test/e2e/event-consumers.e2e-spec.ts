import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AgentsRepository } from '../../src/agents/agents.repository.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { EventConsumerLane } from '../../src/events/consumers/event-consumer-lane.schema.js';
import type { DomainEventName } from '../../src/events/domain-events.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { FlowExecution } from '../../src/flows/flow-execution.schema.js';
import { FlowExecutionsRepository } from '../../src/flows/flow-executions.repository.js';
import { FlowRunner } from '../../src/flows/flow-runner.js';
import { MAX_FLOWS_PER_COMPANY } from '../../src/flows/flow.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery.schema.js';
import { WebhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import { addAgent, createApiKey, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import { settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** Each consumer stopped between two of its steps, then run again (the retry of its lane): the effect happens once. */
describe('event consumers stopped between their steps', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ env: { WEBHOOK_TIMEOUT_MS: '1000' } });
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(async () => {
    await t.close();
    await receiver.close();
  });

  async function company(name: string): Promise<TestCompany & { key: string }> {
    const registered = await registerCompany(t.http, name);
    return { ...registered, key: await createApiKey(t.http, registered, ['messages:write']) };
  }

  const inbound = (tenant: { key: string }, text: string, email = uniqueEmail('customer')) =>
    t.http.post('/api/external/messages').set('x-api-key', tenant.key).send({ from: { email }, text }).expect(201);

  const loggedTypes = async (tenant: TestCompany, type: DomainEventName) =>
    t.model<LoggedEvent>(LoggedEvent.name).find({ companyId: tenant.companyId, type }).lean<LoggedEvent[]>();

  /** A consumer's lane failed and was retried: its failure is on record. */
  const lastErrorOf = async (tenant: TestCompany, consumer: string) =>
    (await t.model<EventConsumerLane>(EventConsumerLane.name).findOne({ companyId: tenant.companyId, _id: `${consumer}:${tenant.companyId}` }).lean())
      ?.lastError;

  it('webhook fan-out: deliveries written, lanes not yet told (the outbox gap) — the retry tells them, one delivery, one webhook-id', async () => {
    const acme = await company('Gap');
    const hook = await t.http.post('/v1/webhooks').set(acme.auth).send({ url: receiver.url('/gap'), events: ['CHAT_RECEIVED'] }).expect(201);
    const markQueued = jest.spyOn(t.app.get(WebhooksRepository), 'markQueued').mockRejectedValueOnce(new Error('process killed'));
    await inbound(acme, 'Hello?');
    const [request] = await receiver.received('/gap', 1);
    await settle(t);

    expect(markQueued).toHaveBeenCalledTimes(2);
    expect(await lastErrorOf(acme, 'webhooks')).toBe('process killed');
    const deliveries = await t.model<WebhookDelivery>(WebhookDelivery.name).find({ companyId: acme.companyId, webhookId: hook.body.id.slice(3) }).lean();
    expect(deliveries).toHaveLength(1);
    expect(request.headers['webhook-id']).toBe(`dlv_${deliveries[0]._id.toHexString()}`);
    expect(receiver.to('/gap')).toHaveLength(1);
  });

  describe('inbound flows', () => {
    async function flowCompany(name: string) {
      const tenant = await company(name);
      await t.http
        .post('/v1/flows')
        .set(tenant.auth)
        .send({
          name: 'Greet and hand off',
          trigger: { type: 'inbound_message' },
          steps: [{ type: 'send_message', text: 'Hi! Passing you to a human.' }, { type: 'handoff' }],
        })
        .expect(201);
      return tenant;
    }

    async function outcome(tenant: TestCompany, conversationId: string) {
      const messages = await t.model<Message>(Message.name).find({ companyId: tenant.companyId, conversationId, direction: 'outbound' }).lean();
      const executions = await t.model<FlowExecution>(FlowExecution.name).find({ companyId: tenant.companyId }).lean();
      const conversation = await t.model<Conversation>(Conversation.name).findOne({ companyId: tenant.companyId, _id: conversationId }).lean();
      return { messages, executions, conversation };
    }

    it('stopped after sending its message, before recording the step: the run resumes, the message is sent once', async () => {
      const acme = await flowCompany('Resume after send');
      const recordStep = jest.spyOn(t.app.get(FlowExecutionsRepository), 'recordStep').mockRejectedValueOnce(new Error('process killed'));
      const response = await inbound(acme, 'hello');
      await settle(t);

      const { messages, executions, conversation } = await outcome(acme, response.body.data.conversation.id);
      expect(recordStep).toHaveBeenCalledTimes(3);
      expect(messages.map((message) => message.text)).toEqual(['Hi! Passing you to a human.']);
      expect(executions).toHaveLength(1);
      expect(executions[0]).toMatchObject({
        status: 'completed',
        steps: [
          { type: 'send_message', status: 'completed' },
          { type: 'handoff', status: 'completed' },
        ],
      });
      expect(conversation).toMatchObject({ status: 'queued' });
      expect(await loggedTypes(acme, 'message.sent')).toHaveLength(1);
      expect(await loggedTypes(acme, 'flow.executed')).toHaveLength(1);
    });

    it('stopped after handing off, before recording the step: the resumed run finds the hand-off done, not refused', async () => {
      const acme = await flowCompany('Resume after hand-off');
      const executions = t.app.get(FlowExecutionsRepository);
      const recordStep = executions.recordStep.bind(executions);
      let calls = 0;
      jest.spyOn(executions, 'recordStep').mockImplementation(async (...args) => {
        calls += 1;
        if (calls === 2) throw new Error('process killed');
        return recordStep(...args);
      });
      const response = await inbound(acme, 'hello');
      await settle(t);

      const outcomeNow = await outcome(acme, response.body.data.conversation.id);
      expect(outcomeNow.executions).toHaveLength(1);
      expect(outcomeNow.executions[0].steps).toEqual([
        { type: 'send_message', status: 'completed' },
        { type: 'handoff', status: 'completed' },
      ]);
      expect(outcomeNow.messages).toHaveLength(1);
      expect(await loggedTypes(acme, 'conversation.queued')).toHaveLength(1);
      expect(await loggedTypes(acme, 'flow.executed')).toHaveLength(1);
    });

    it('answers the inbound message without waiting for the flows it triggers', async () => {
      const acme = await flowCompany('Slow flow');
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const runner = t.app.get(FlowRunner);
      const runTriggered = runner.runTriggered.bind(runner);
      jest.spyOn(runner, 'runTriggered').mockImplementation(async (...args) => {
        await gate;
        return runTriggered(...args);
      });
      // The flow is held until released, so an answer now is an answer that did not wait for it.
      const response = await inbound(acme, 'hello');
      expect(response.body.data.conversation).toMatchObject({ status: 'bot' });
      expect((await outcome(acme, response.body.data.conversation.id)).executions).toHaveLength(0);

      release();
      await settle(t);
      const after = await outcome(acme, response.body.data.conversation.id);
      expect(after.executions).toEqual([expect.objectContaining({ status: 'completed' })]);
      expect(after.conversation).toMatchObject({ status: 'queued' });
    });
  });

  it('auto-assignment stopped between two assignments: the retry assigns the rest, each conversation once, within capacity', async () => {
    const acme = await company('Assign resume');
    await t.http.patch('/v1/settings').set(acme.auth).send({ autoAssignment: { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 2 } }).expect(200);
    const [one, two] = [await addAgent(t, acme, 'agent'), await addAgent(t, acme, 'agent')];
    await t.http.patch(`/v1/agents/${acme.agentId}`).set(acme.auth).send({ status: 'offline' }).expect(200);
    const ids: string[] = [];
    for (let index = 0; index < 5; index += 1) ids.push((await inbound(acme, `#${index}`)).body.data.conversation.id);
    await settle(t);

    const agents = t.app.get(AgentsRepository);
    const reserve = agents.reserve.bind(agents);
    let calls = 0;
    // Reserving room for the second conversation fails: the process dies after the first assignment.
    jest.spyOn(agents, 'reserve').mockImplementation(async (...args) => {
      calls += 1;
      if (calls === 2) throw new Error('process killed');
      return reserve(...args);
    });
    for (const id of ids) await t.http.patch(`/v1/conversations/${id}`).set(acme.auth).send({ status: 'queued' }).expect(200);
    await settle(t);

    expect(await lastErrorOf(acme, 'auto-assignment')).toBe('process killed');
    const conversations = await t.model<Conversation>(Conversation.name).find({ companyId: acme.companyId, _id: { $in: ids } }).lean();
    expect(conversations.filter((conversation) => conversation.status === 'human')).toHaveLength(4);
    const load = (agentId: string) => conversations.filter((conversation) => conversation.assignedAgentId?.toHexString() === agentId).length;
    expect([load(one.agentId), load(two.agentId)]).toEqual([2, 2]);
    const assigned = await loggedTypes(acme, 'conversation.assigned');
    const perConversation = new Map<string, number>();
    for (const event of assigned) {
      const id = (event.data as { conversation: { id: string } }).conversation.id;
      perConversation.set(id, (perConversation.get(id) ?? 0) + 1);
    }
    expect([...perConversation.values()]).toEqual([1, 1, 1, 1]);
  });

  it(`caps flows at ${MAX_FLOWS_PER_COMPANY} per company and keywords at 50 per flow`, async () => {
    const acme = await company('Capped');
    const flow = (index: number) => ({ name: `F${index}`, isActive: false, steps: [{ type: 'handoff' }] });
    await Promise.all(Array.from({ length: MAX_FLOWS_PER_COMPANY }, (_, index) => t.http.post('/v1/flows').set(acme.auth).send(flow(index)).expect(201)));
    const refused = await t.http.post('/v1/flows').set(acme.auth).send(flow(MAX_FLOWS_PER_COMPANY)).expect(400);
    expect(refused.body.message).toBe(`A company can have at most ${MAX_FLOWS_PER_COMPANY} flows`);

    const other = await company('Keywords');
    const keywords = (count: number, length = 5) => Array.from({ length: count }, (_, index) => `k${index}`.padEnd(length, 'x'));
    const triggered = (words: string[]) => ({ name: 'Keywords', trigger: { type: 'inbound_message', keywords: words }, steps: [{ type: 'handoff' }] });
    await t.http.post('/v1/flows').set(other.auth).send(triggered(keywords(50, 100))).expect(201);
    await t.http.post('/v1/flows').set(other.auth).send(triggered(keywords(51))).expect(400);
    await t.http.post('/v1/flows').set(other.auth).send(triggered(keywords(1, 101))).expect(400);
  });
});
