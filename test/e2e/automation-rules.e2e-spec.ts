import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { AutomationRule } from '../../src/automation-rules/automation-rule.schema.js';
import { AutomationRun } from '../../src/automation-rules/automation-run.schema.js';
import { AutomationRulesConsumer } from '../../src/automation-rules/automation-rules.consumer.js';
import { RULE_TIMER } from '../../src/automation-rules/rule-timers.js';
import type { AnyDomainEvent } from '../../src/events/domain-events.js';
import { toDomainEvent } from '../../src/events/event-log.repository.js';
import { LoggedEvent } from '../../src/events/event-log.schema.js';
import { FlowExecution } from '../../src/flows/flow-execution.schema.js';
import { DurableTimer } from '../../src/lanes/durable-timer.schema.js';
import { DurableTimers } from '../../src/lanes/durable-timers.js';
import { Message } from '../../src/messages/message.schema.js';
import { settle } from '../support/event-log.js';
import { addAgent, type TestCompany } from '../support/factories.js';
import { companyWithKey, conversationOf, inbound, loggedOf, quietly, reply, settled, type ServiceLevelsCompany } from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const MINUTE = 60_000;

describe('automation rules (/v1/automation-rules)', () => {
  const clock = new TestClock();
  let t: TestApp;
  let acme: ServiceLevelsCompany;
  let globex: ServiceLevelsCompany;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
    acme = await companyWithKey(t, 'Acme rules');
    globex = await companyWithKey(t, 'Globex rules');
    await t.http
      .post('/v1/attribute-definitions')
      .set(acme.auth)
      .send({ model: 'conversation', key: 'amount', label: 'Amount', type: 'number' })
      .expect(201);
  });
  afterAll(async () => {
    await t.close();
  });

  const rulesOf = (company: TestCompany) => t.model<AutomationRule>(AutomationRule.name).countDocuments({ companyId: company.companyId });
  const create = async (company: TestCompany, body: Record<string, unknown>) =>
    (
      await t.http
        .post('/v1/automation-rules')
        .set(company.auth)
        .send({ name: 'Rule', ...body })
        .expect(201)
    ).body as { id: string; version: number };
  const runsOf = async (company: TestCompany, ruleId: string) =>
    (await t.http.get(`/v1/automation-rules/${ruleId}/runs`).set(company.auth).expect(200)).body.data;
  /** The company's message.received handled again by the rules' consumer, as a retry after a crash would. */
  const handleReceivedAgain = async (company: TestCompany) => {
    const received = await t
      .model<LoggedEvent>(LoggedEvent.name)
      .findOne({ companyId: company.companyId, type: 'message.received' })
      .lean<LoggedEvent>();
    await t.app.get(AutomationRulesConsumer).handle(company.companyId, [toDomainEvent(received!, company.companyId)]);
    await settle(t);
  };
  const deactivate = (company: TestCompany, ruleId: string) =>
    t.http.patch(`/v1/automation-rules/${ruleId}`).set(company.auth).send({ isActive: false }).expect(200);

  it('creates, lists, gets, changes (moving its version) and deletes a rule; agents read, supervisors manage', async () => {
    const team = await t.http.post('/v1/teams').set(acme.auth).send({ name: 'Billing' }).expect(201);
    const supervisor = await addAgent(t, acme, 'supervisor');
    const agent = await addAgent(t, acme, 'agent');
    const body = {
      name: 'Refunds to Billing',
      trigger: { event: 'message.received' },
      conditions: {
        and: [
          { field: 'tags', op: 'eq', value: 'refund' },
          { field: 'attributes.amount', op: 'gt', value: 100 },
        ],
      },
      actions: [
        { type: 'assign_team', teamId: team.body.id },
        { type: 'set_priority', priority: 'high' },
      ],
    };
    const created = await t.http.post('/v1/automation-rules').set(supervisor.auth).send(body).expect(201);
    expect(created.body).toMatchObject({ ...body, isActive: true, stopOnError: false, version: 1 });
    const id = created.body.id as string;
    expect((await t.http.get(`/v1/automation-rules/${id}`).set(agent.auth).expect(200)).body.name).toBe('Refunds to Billing');
    expect((await t.http.get('/v1/automation-rules').set(agent.auth).expect(200)).body.data.map((rule: { id: string }) => rule.id)).toContain(id);

    const before = await rulesOf(acme);
    await t.http.post('/v1/automation-rules').set(agent.auth).send(body).expect(403);
    await t.http.patch(`/v1/automation-rules/${id}`).set(agent.auth).send({ isActive: false }).expect(403);
    await t.http.delete(`/v1/automation-rules/${id}`).set(agent.auth).expect(403);
    expect(await rulesOf(acme)).toBe(before);

    const changed = await t.http.patch(`/v1/automation-rules/${id}`).set(supervisor.auth).send({ isActive: false, stopOnError: true }).expect(200);
    expect(changed.body).toMatchObject({ isActive: false, stopOnError: true, version: 2 });

    // Another company's rule is not found, whatever the route.
    await t.http.get(`/v1/automation-rules/${id}`).set(globex.auth).expect(404);
    await t.http.patch(`/v1/automation-rules/${id}`).set(globex.auth).send({ isActive: true }).expect(404);
    await t.http.get(`/v1/automation-rules/${id}/runs`).set(globex.auth).expect(404);
    await t.http.delete(`/v1/automation-rules/${id}`).set(globex.auth).expect(404);
    expect((await t.http.get('/v1/automation-rules').set(globex.auth).expect(200)).body.data).toEqual([]);

    await t.http.delete(`/v1/automation-rules/${id}`).set(acme.auth).expect(200, { id, deleted: true });
    await t.http.get(`/v1/automation-rules/${id}`).set(acme.auth).expect(404);
  });

  it('refuses bad input with a 400 naming the field, and stores nothing', async () => {
    const theirTeam = await t.http.post('/v1/teams').set(globex.auth).send({ name: 'Theirs' }).expect(201);
    const add = { type: 'add_tags', tags: ['x'] };
    const cases: [Record<string, unknown>, string][] = [
      [{ trigger: { event: 'message.deleted' }, actions: [add] }, 'trigger.event'],
      [{ trigger: { timer: { after: '30s', since: 'created' } }, actions: [add] }, 'trigger.timer.after'],
      [{ trigger: { timer: { after: '91d', since: 'created' } }, actions: [add] }, 'trigger.timer.after'],
      [{ trigger: { timer: { after: '1h', since: 'yesterday' } }, actions: [add] }, 'trigger.timer.since'],
      [{ trigger: { event: 'message.received' }, actions: [{ type: 'explode' }] }, 'actions[0].type'],
      [{ trigger: { event: 'message.received' }, actions: [add, { type: 'assign_team' }] }, 'actions[1].teamId'],
      [{ trigger: { event: 'message.received' }, actions: [{ type: 'assign_team', teamId: theirTeam.body.id }] }, 'actions[0].teamId'],
      [{ trigger: { event: 'message.received' }, actions: [{ type: 'assign_agent', agentId: globex.agentId }] }, 'actions[0].agentId'],
      [
        { trigger: { event: 'message.received' }, actions: [{ type: 'send_message', cannedResponseId: '6650f0c2a1b2c3d4e5f60718' }] },
        'actions[0].cannedResponseId',
      ],
      [{ trigger: { event: 'message.received' }, actions: [{ type: 'run_flow', flowId: '6650f0c2a1b2c3d4e5f60718' }] }, 'actions[0].flowId'],
      [{ trigger: { event: 'message.received' }, actions: [{ type: 'set_attribute', key: 'amount', value: 'lots' }] }, 'actions[0].value'],
      [{ trigger: { event: 'message.received' }, actions: [{ type: 'set_attribute', key: 'nope', value: 1 }] }, 'actions[0].key'],
      [{ trigger: { event: 'message.received' }, actions: Array.from({ length: 21 }, () => add) }, 'actions'],
      [
        { trigger: { event: 'message.received' }, conditions: { and: [{ field: 'status', op: 'eq', value: 'open' }] }, actions: [add] },
        'conditions.and[0].value',
      ],
    ];
    const before = await rulesOf(acme);
    for (const [body, field] of cases) {
      const response = await t.http
        .post('/v1/automation-rules')
        .set(acme.auth)
        .send({ name: 'Bad', ...body })
        .expect(400);
      expect(JSON.stringify(response.body)).toContain(field);
    }
    expect(await rulesOf(acme)).toBe(before);
    const rule = await create(acme, { trigger: { event: 'message.received' }, actions: [add], isActive: false });
    await t.http
      .patch(`/v1/automation-rules/${rule.id}`)
      .set(acme.auth)
      .send({ actions: [{ type: 'set_priority', priority: 'urgent' }] })
      .expect(400);
    expect((await t.http.get(`/v1/automation-rules/${rule.id}`).set(acme.auth).expect(200)).body).toMatchObject({ actions: [add], version: 1 });
  });

  it('applies an event rule once per event, records its run, and marks the events it causes', async () => {
    const company = await companyWithKey(t, 'Rules once');
    await t.http
      .post('/v1/attribute-definitions')
      .set(company.auth)
      .send({ model: 'conversation', key: 'amount', label: 'Amount', type: 'number' })
      .expect(201);
    const team = await t.http.post('/v1/teams').set(company.auth).send({ name: 'Refunds' }).expect(201);
    const rule = await create(company, {
      trigger: { event: 'message.received' },
      conditions: { field: 'status', op: 'eq', value: 'bot' },
      actions: [
        { type: 'add_tags', tags: ['refund'] },
        { type: 'set_attribute', key: 'amount', value: 250 },
        { type: 'send_message', text: 'A billing specialist will help you.' },
        { type: 'assign_team', teamId: team.body.id },
        { type: 'set_priority', priority: 'high' },
      ],
    });
    // A team deleted since the rule was saved: that action fails, clearly, and the next still runs.
    await t.http.delete(`/v1/teams/${team.body.id}`).set(company.auth).expect(200);
    const { conversation } = await inbound(t, company, 'I want a refund');
    const after = await settled(t, company, conversation.id);
    expect(after).toMatchObject({ tags: ['refund'], attributes: { amount: 250 }, priority: 'high', teamId: null });

    const runs = await runsOf(company, rule.id);
    expect(runs).toEqual([
      {
        id: expect.any(String),
        ruleId: rule.id,
        conversationId: conversation.id,
        trigger: { event: 'message.received', eventId: expect.stringMatching(/^evt_/) },
        at: expect.any(String),
        outcome: 'failed',
        actions: [
          { type: 'add_tags', status: 'ok' },
          { type: 'set_attribute', status: 'ok' },
          { type: 'send_message', status: 'ok' },
          { type: 'assign_team', status: 'failed', error: expect.stringContaining('teamId') },
          { type: 'set_priority', status: 'ok' },
        ],
      },
    ]);
    const cause = { ruleId: rule.id, runId: runs[0].id, depth: 1 };
    const caused = await loggedOf(t, company, 'conversation.updated', 'message.sent', 'conversation.priority_changed');
    expect(caused.length).toBeGreaterThanOrEqual(4);
    for (const event of caused) expect((event.data as { cause?: unknown }).cause).toEqual(cause);
    const applied = await loggedOf(t, company, 'automation.applied');
    expect(applied).toHaveLength(1);
    expect(applied[0].data).toMatchObject({ run: { id: runs[0].id, outcome: 'failed' }, conversation: { id: conversation.id } });

    // The same event handled again (a retry after a crash) applies nothing twice.
    await handleReceivedAgain(company);
    expect(await runsOf(company, rule.id)).toHaveLength(1);
    const botMessages = () => t.model<Message>(Message.name).countDocuments({ companyId: company.companyId, senderType: 'bot' });
    expect(await botMessages()).toBe(1);
    expect(await loggedOf(t, company, 'automation.applied')).toHaveLength(1);

    // Another event is another run.
    await t.http
      .post('/api/external/messages')
      .set('x-api-key', company.key)
      .send({ from: { email: conversation.contact!.email }, text: 'Hello?' })
      .expect(201);
    await settle(t);
    expect(await runsOf(company, rule.id)).toHaveLength(2);
    expect(await botMessages()).toBe(2);
  });

  it('starts a flow once per run and action, even when a crash left the flow started and the action unrecorded', async () => {
    const company = await companyWithKey(t, 'Rules flow');
    const flow = await t.http
      .post('/v1/flows')
      .set(company.auth)
      .send({ name: 'Greeting', steps: [{ type: 'send_message', text: 'From the flow' }] })
      .expect(201);
    const rule = await create(company, {
      trigger: { event: 'message.received' },
      actions: [
        { type: 'add_tags', tags: ['flowed'] },
        { type: 'run_flow', flowId: flow.body.id },
      ],
    });
    const { conversation } = await inbound(t, company, 'Hi');
    await settle(t);
    const [run] = await runsOf(company, rule.id);
    expect(run).toMatchObject({
      outcome: 'applied',
      actions: [
        { type: 'add_tags', status: 'ok' },
        { type: 'run_flow', status: 'ok' },
      ],
    });
    const executions = () => t.model<FlowExecution>(FlowExecution.name).find({ companyId: company.companyId }).lean<FlowExecution[]>();
    const flowMessages = () => t.model<Message>(Message.name).countDocuments({ companyId: company.companyId, text: 'From the flow' });
    expect(await executions()).toEqual([expect.objectContaining({ status: 'completed', trigger: 'manual', triggerKey: `rule:${run.id}:1` })]);
    expect(await flowMessages()).toBe(1);

    // Killed after the flow ran, before the run recorded the action: the event is handled again and resumes the run.
    await t
      .model<AutomationRun>(AutomationRun.name)
      .updateOne({ companyId: company.companyId, _id: run.id }, { $set: { outcome: 'running', actions: [run.actions[0]] } });
    await handleReceivedAgain(company);
    expect(await runsOf(company, rule.id)).toEqual([expect.objectContaining({ id: run.id, outcome: 'applied', actions: run.actions })]);
    expect(await executions()).toHaveLength(1);
    expect(await flowMessages()).toBe(1);
    expect((await conversationOf(t, company, conversation.id)).tags).toEqual(['flowed']);
  });

  it('records nothing when the conditions do not match', async () => {
    const company = await companyWithKey(t, 'Rules unmatched');
    const rule = await create(company, {
      trigger: { event: 'message.received' },
      conditions: { field: 'priority', op: 'eq', value: 'high' },
      actions: [{ type: 'add_tags', tags: ['seen'] }],
    });
    const { conversation } = await inbound(t, company, 'Hi');
    expect((await settled(t, company, conversation.id)).tags).toEqual([]);
    expect(await runsOf(company, rule.id)).toEqual([]);
    expect(await loggedOf(t, company, 'automation.applied')).toEqual([]);
  });

  it('stops a rule that triggers itself at depth 3', async () => {
    const company = await companyWithKey(t, 'Rules loop');
    const rule = await create(company, { trigger: { event: 'message.sent' }, actions: [{ type: 'send_message', text: 'Echo' }] });
    const { conversation } = await inbound(t, company, 'Hi');
    await settle(t);
    await reply(t, company, conversation.id, 'Hello from an agent');
    await settle(t);
    const runs = await runsOf(company, rule.id);
    expect(runs.map((run: { outcome: string }) => run.outcome).sort()).toEqual(['applied', 'applied', 'applied', 'loop_stopped']);
    expect(runs.find((run: { outcome: string }) => run.outcome === 'loop_stopped').actions).toEqual([{ type: 'send_message', status: 'skipped' }]);
    expect(await t.model<Message>(Message.name).countDocuments({ companyId: company.companyId, senderType: 'bot', text: 'Echo' })).toBe(3);
    const depths = (await loggedOf(t, company, 'message.sent')).map(
      (event: AnyDomainEvent) => (event.data as { cause?: { depth: number } }).cause?.depth ?? 0,
    );
    expect(depths).toEqual([0, 1, 2, 3]);
  });

  it('dry-runs a rule on a conversation without changing it', async () => {
    const company = await companyWithKey(t, 'Rules dry run');
    const rule = await create(company, {
      trigger: { event: 'conversation.updated' },
      conditions: {
        or: [
          { field: 'status', op: 'eq', value: 'bot' },
          { field: 'priority', op: 'eq', value: 'high' },
        ],
      },
      actions: [{ type: 'add_tags', tags: ['vip'] }, { type: 'snooze', for: '1h' }, { type: 'handoff' }],
      isActive: false,
    });
    const { conversation } = await inbound(t, company, 'Hi');
    await settle(t);
    const before = await conversationOf(t, company, conversation.id);
    const agent = await addAgent(t, company, 'agent');
    await t.http.post(`/v1/automation-rules/${rule.id}/test`).set(agent.auth).send({ conversationId: conversation.id }).expect(403);
    const answer = await t.http.post(`/v1/automation-rules/${rule.id}/test`).set(company.auth).send({ conversationId: conversation.id }).expect(200);
    expect(answer.body).toEqual({
      matched: true,
      conditions: [
        { path: 'conditions.or[0]', matched: true },
        { path: 'conditions.or[1]', matched: false },
      ],
      actions: [
        { type: 'add_tags', wouldApply: true },
        { type: 'snooze', wouldApply: false, reason: expect.stringContaining('bot') },
        { type: 'handoff', wouldApply: true },
      ],
    });
    await t.http.post(`/v1/automation-rules/${rule.id}/test`).set(globex.auth).send({ conversationId: conversation.id }).expect(404);
    await t.http.post(`/v1/automation-rules/${rule.id}/test`).set(company.auth).send({ conversationId: 'nope' }).expect(400);
    expect(await conversationOf(t, company, conversation.id)).toEqual(before);
    expect(await runsOf(company, rule.id)).toEqual([]);
  });

  it('fires a time trigger after its anchor, and not once the anchor is answered, or for an older version', async () => {
    const company = await companyWithKey(t, 'Rules timers');
    const rule = await create(company, {
      trigger: { timer: { after: '10m', since: 'last_contact_message' } },
      actions: [{ type: 'close', reason: 'no_answer' }],
    });
    const timers = () => t.model<DurableTimer>(DurableTimer.name).find({ kind: 'automation-rule', companyId: company.companyId }).lean();
    const waiting = (await inbound(t, company, 'Anyone?')).conversation;
    const answered = (await inbound(t, company, 'Hello?')).conversation;
    const dropped = (await inbound(t, company, 'Never mind')).conversation;
    await settle(t);
    expect(await timers()).toHaveLength(3);
    await reply(t, company, answered.id, 'Here!');
    // Closing cancels its timers.
    await t.http.post(`/v1/conversations/${dropped.id}/close`).set(company.auth).send({}).expect(200);
    await settle(t);
    expect((await timers()).map((timer) => String(timer._id))).toEqual([`automation-rule:${rule.id}:${waiting.id}`]);
    // Past its close, an event no time trigger counts from (a tag) touches no timer: the close cancelled them.
    const cancels = jest.spyOn(t.app.get(DurableTimers), 'cancel');
    await t.http
      .patch(`/v1/conversations/${dropped.id}`)
      .set(company.auth)
      .send({ tags: ['late'] })
      .expect(200);
    await settle(t);
    expect(await loggedOf(t, company, 'conversation.updated')).toHaveLength(1);
    expect(cancels.mock.calls.filter(([, kind]) => kind === RULE_TIMER)).toEqual([]);
    cancels.mockRestore();

    clock.advance(11 * MINUTE);
    await waitFor(async () => (await conversationOf(t, company, waiting.id)).status === 'closed', {
      timeoutMs: 5000,
      message: 'the rule to close it',
    });
    await settle(t);
    expect((await conversationOf(t, company, answered.id)).status).not.toBe('closed');
    const runs = await runsOf(company, rule.id);
    expect(runs).toEqual([
      expect.objectContaining({
        conversationId: waiting.id,
        trigger: { timer: { after: '10m', since: 'last_contact_message' } },
        outcome: 'applied',
      }),
    ]);

    // A timer set by version 1 does nothing once the rule is edited.
    const later = (await inbound(t, company, 'Still there?')).conversation;
    await settle(t);
    await t.http.patch(`/v1/automation-rules/${rule.id}`).set(company.auth).send({ name: 'Edited' }).expect(200);
    clock.advance(11 * MINUTE);
    await waitFor(async () => (await timers()).length === 0, { timeoutMs: 5000, message: 'the old timer to fire' });
    await quietly();
    expect((await conversationOf(t, company, later.id)).status).not.toBe('closed');
    expect(await runsOf(company, rule.id)).toHaveLength(1);
    await deactivate(company, rule.id);
  });
});
