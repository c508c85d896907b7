import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient, ObjectId, type Db } from 'mongodb';
import request from 'supertest';
import { CONVERSATIONS_AT_ONCE } from '../../src/events/consumers/conversation-batches.js';
import { PendingEventSweep, PENDING_EVENT_GRACE_MS } from '../../src/events/pending-event-sweep.js';
import { startDeployment, type ApiProcess, type Deployment } from '../support/deployment.js';
import { settle } from '../support/event-log.js';
import { createApiKey, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import { waitFor } from '../support/wait-for.js';

const DATABASE = 'rulescrash';
/**
 * More conversations than the consumer takes at once: the first ones run side by side and end together, so only
 * those started as they end leave a window where some runs are done and others under way.
 */
const EVENTS = CONVERSATIONS_AT_ONCE + 4;
/**
 * How long the polls try to catch a run between an action's effect and its record before killing anyway: short, as
 * the runs side by side all end within a second or two.
 */
const AIM_MS = 300;
/** The texts each run leaves once: the rule's messages and notes, and the flow's message (the flow runs twice). */
const ONCE_PER_RUN = { First: 1, Second: 1, Third: 1, Noted: 1, 'Noted again': 1, 'From the flow': 2 };

describe('automation rules across a kill -9', () => {
  let deployment: Deployment;
  let doomed: ApiProcess;
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    deployment = await startDeployment(DATABASE, { THROTTLE_LIMIT: '100000' }, 0);
    doomed = await deployment.spawn();
    client = await MongoClient.connect(`${deployment.engine.uri}${DATABASE}`);
    db = client.db();
  }, 90_000);
  afterAll(async () => {
    await client?.close();
    await deployment?.stop();
  }, 60_000);

  it('applies no action twice when the process running the rules is killed mid-run, and a survivor finishes', async () => {
    const http = request.agent(doomed.base);
    const company: TestCompany = await registerCompany(http, 'Rules crash');
    const key = await createApiKey(http, company, ['messages:write']);
    await http
      .post('/v1/attribute-definitions')
      .set(company.auth)
      .send({ model: 'conversation', key: 'stage', label: 'Stage', type: 'number' })
      .expect(201);
    const flow = await http
      .post('/v1/flows')
      .set(company.auth)
      .send({
        name: 'Greeting',
        steps: [
          { type: 'send_message', text: 'From the flow' },
          { type: 'add_tags', tags: ['flowed'] },
        ],
      })
      .expect(201);
    const actions = [
      { type: 'add_tags', tags: ['ruled'] },
      { type: 'send_message', text: 'First' },
      { type: 'set_attribute', key: 'stage', value: 1 },
      { type: 'run_flow', flowId: flow.body.id },
      { type: 'add_note', text: 'Noted' },
      { type: 'send_message', text: 'Second' },
      { type: 'set_priority', priority: 'high' },
      { type: 'run_flow', flowId: flow.body.id },
      { type: 'add_note', text: 'Noted again' },
      { type: 'send_message', text: 'Third' },
    ];
    const rule = await http
      .post('/v1/automation-rules')
      .set(company.auth)
      .send({ name: 'Everything', trigger: { event: 'message.received' }, actions })
      .expect(201);

    // Many events in flight: the process is killed while it is between runs' actions, some runs done, one under way.
    const runs = db.collection('automation_runs');
    const companyId = new ObjectId(company.companyId);
    await Promise.all(
      Array.from({ length: EVENTS }, (_, i) =>
        http
          .post('/api/external/messages')
          .set('x-api-key', key)
          .send({ from: { email: uniqueEmail(`crash${i}`) }, text: `Refund ${i}` })
          .expect(201),
      ),
    );
    // Aimed between an action and the run's record of it: the polls look for the effect of the action a running run has
    // not recorded yet (its message or flow run); failing that for a few seconds, any moment some runs are done and
    // others under way. A poll takes about 100 ms while the runs go on side by side, so it ends by checking that two
    // are still under way: one still is when the kill lands.
    let aimUntil = 0;
    await waitFor(
      async () => {
        if ((await runs.countDocuments({ companyId, outcome: 'applied' })) < 2) return false;
        if ((await runs.countDocuments({ companyId, outcome: 'running', 'actions.0': { $exists: true } })) === 0) return false;
        aimUntil ||= Date.now() + AIM_MS;
        const aimed = (await unrecordedEffects(companyId)) > 0 || Date.now() > aimUntil;
        return aimed && (await runs.countDocuments({ companyId, outcome: 'running' })) >= 2;
      },
      { timeoutMs: 30_000, intervalMs: 5, message: 'runs to be under way' },
    );
    await doomed.kill();
    const cut = await runs.find({ companyId, outcome: 'running' }).toArray();
    const appliedAtKill = await runs.countDocuments({ companyId, outcome: 'applied' });
    expect(cut.length).toBeGreaterThan(0);
    expect(appliedAtKill).toBeLessThan(EVENTS);

    // The dead process's leases lapse; the survivor relays what it left pending and takes the rules' log over.
    const past = new Date(Date.now() - 1000);
    await db.collection('event_consumers').updateMany({ leaseOwner: { $ne: null } }, { $set: { leaseUntil: past } });
    await db.collection('scheduled_jobs').updateMany({ leaseOwner: { $ne: null } }, { $set: { leaseUntil: past } });
    const { app: survivor } = await deployment.add();
    await survivor.app.get(PendingEventSweep).sweep(new Date(Date.now() + PENDING_EVENT_GRACE_MS));
    await waitFor(async () => (await runs.countDocuments({ companyId, outcome: { $ne: 'running' } })) === EVENTS, {
      timeoutMs: 90_000,
      intervalMs: 500,
      message: 'every run to end',
    });
    await settle(survivor);

    const stored = await runs.find({ companyId }).toArray();
    expect(stored).toHaveLength(EVENTS);
    for (const run of stored) {
      expect(run).toMatchObject({ ruleId: expect.anything(), outcome: 'applied', actions: actions.map(({ type }) => ({ type, status: 'ok' })) });
    }
    const conversationIds = stored.map((run) => run.conversationId.toHexString()).sort();
    expect(new Set(conversationIds).size).toBe(EVENTS);
    await expectEachOnce(company, conversationIds, rule.body.id);
  }, 180_000);

  /** How many running runs have the effect of their next action stored (a message, a flow run) but not recorded. */
  async function unrecordedEffects(companyId: ObjectId): Promise<number> {
    let found = 0;
    for (const run of await db.collection('automation_runs').find({ companyId, outcome: 'running' }).toArray()) {
      const key = `rule:${run._id.toHexString()}:${run.actions.length}`;
      if (await db.collection('messages').countDocuments({ companyId, dedupeKey: key })) found += 1;
      else if (await db.collection('flow_executions').countDocuments({ companyId, triggerKey: key })) found += 1;
    }
    return found;
  }

  /** Every conversation holds each effect of the rule's actions once: messages, notes, flow runs, tags, caused events. */
  async function expectEachOnce(company: TestCompany, conversationIds: string[], ruleId: string): Promise<void> {
    const companyId = new ObjectId(company.companyId);
    const texts = await db
      .collection('messages')
      .aggregate<{ _id: { conversationId: unknown; text: string }; count: number }>([
        { $match: { companyId, senderType: 'bot' } },
        { $group: { _id: { conversationId: '$conversationId', text: '$text' }, count: { $sum: 1 } } },
      ])
      .toArray();
    for (const conversationId of conversationIds) {
      const mine = Object.fromEntries(
        texts.filter((row) => String(row._id.conversationId) === conversationId).map((row) => [row._id.text, row.count]),
      );
      expect(mine).toEqual(ONCE_PER_RUN);
    }

    const executions = await db.collection('flow_executions').find({ companyId }).toArray();
    expect(executions).toHaveLength(2 * conversationIds.length);
    expect(executions.every((execution) => execution.status === 'completed' && /^rule:[0-9a-f]{24}:(3|7)$/.test(execution.triggerKey))).toBe(true);

    const conversations = await db.collection('conversations').find({ companyId }).toArray();
    for (const conversation of conversations) {
      expect(conversation).toMatchObject({ tags: ['ruled', 'flowed'], priority: 'high', attributes: { stage: 1 } });
    }

    // The events the rule's actions caused, by conversation and type: the same for every conversation, once each.
    const caused = await db
      .collection('events')
      .aggregate<{ _id: { conversationId: string; type: string }; count: number }>([
        { $match: { companyId, 'data.cause.ruleId': ruleId } },
        { $group: { _id: { conversationId: '$data.conversation.id', type: '$type' }, count: { $sum: 1 } } },
      ])
      .toArray();
    const byConversation = new Map<string, Record<string, number>>();
    for (const row of caused)
      byConversation.set(row._id.conversationId, { ...byConversation.get(row._id.conversationId), [row._id.type]: row.count });
    const first = byConversation.get(conversationIds[0]);
    expect(first).toMatchObject({ 'message.sent': 3, 'conversation.note_added': 2, 'conversation.priority_changed': 1 });
    for (const conversationId of conversationIds) expect(byConversation.get(conversationId)).toEqual(first);
    const applied = await db.collection('events').countDocuments({ companyId, type: 'automation.applied' });
    expect(applied).toBe(conversationIds.length);
  }
});
