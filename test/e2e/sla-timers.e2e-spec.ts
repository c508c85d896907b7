import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { SlaDeadlineEventData } from '../../src/events/domain-events.js';
import { DurableTimer } from '../../src/lanes/durable-timer.schema.js';
import { LaneStore } from '../../src/lanes/lane-store.js';
import { SlaTimers } from '../../src/service-levels/sla-timers.js';
import { settle } from '../support/event-log.js';
import { uniqueEmail } from '../support/factories.js';
import { advanceTo, companyWithKey, createPolicy, inbound, loggedOf, plus, quietly, reply, settled, waitForLogged } from '../support/service-levels.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const MINUTE = 60_000;

/** SLA deadlines are fired once, whatever stops between their steps. */
describe('SLA deadlines stopped between their steps', () => {
  const clock = new TestClock();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(() => t.close());

  it('a firing stopped after its write, before its timer was removed, fires again and finds it done: one breach', async () => {
    const acme = await companyWithKey(t, 'Refire');
    await createPolicy(t, acme, { name: 'Fast', firstResponseSeconds: 60 });
    const { conversation } = await inbound(t, acme, 'Hello');
    await settle(t);
    const remove = jest.spyOn(LaneStore.prototype, 'remove').mockRejectedValueOnce(new Error('process killed'));
    advanceTo(clock, plus(conversation.createdAt, 60));
    await waitForLogged(t, acme, 'sla.breached', 1);
    await waitFor(() => remove.mock.calls.length >= 1, { message: 'the removal that fails' });
    // The lease of the stopped firing runs out; another firing finds the breach recorded.
    clock.advance(MINUTE);
    await waitFor(async () => (await t.model<DurableTimer>(DurableTimer.name).countDocuments({ companyId: acme.companyId, kind: 'sla' })) === 0, {
      message: 'the timer to fire again and go',
    });
    await quietly();
    expect(await loggedOf(t, acme, 'sla.breached')).toHaveLength(1);
  });

  it('the consumer stopped after writing the SLA, before setting its timers: the retry sets them, the breach fires once', async () => {
    const acme = await companyWithKey(t, 'NoTimers');
    await createPolicy(t, acme, { name: 'Fast', firstResponseSeconds: 60 });
    const settleTimers = jest.spyOn(SlaTimers.prototype, 'settle').mockRejectedValueOnce(new Error('process killed'));
    const { conversation } = await inbound(t, acme, 'Hello');
    const opened = await settled(t, acme, conversation.id);
    expect(settleTimers.mock.calls.length).toBeGreaterThanOrEqual(2);
    expect(opened.sla?.firstResponseDueAt).toBe(plus(conversation.createdAt, 60));
    expect(await t.model<DurableTimer>(DurableTimer.name).countDocuments({ companyId: acme.companyId, kind: 'sla' })).toBe(1);
    advanceTo(clock, plus(conversation.createdAt, 60));
    await waitForLogged(t, acme, 'sla.breached', 1);
    await quietly();
    expect(await loggedOf(t, acme, 'sla.breached')).toHaveLength(1);
  });

  it('a deadline no timer saw (the timers were lost): the answer after it records the breach, after the fact, once', async () => {
    const acme = await companyWithKey(t, 'AfterTheFact');
    const policy = await createPolicy(t, acme, { name: 'Fast', firstResponseSeconds: 60, nextResponseSeconds: 60 });
    jest.spyOn(SlaTimers.prototype, 'settle').mockResolvedValue(undefined);
    const from = { email: uniqueEmail('customer') };
    const { conversation } = await inbound(t, acme, 'Hello', from);
    await settle(t);
    advanceTo(clock, plus(conversation.createdAt, 90));
    await quietly();
    expect(await loggedOf(t, acme, 'sla.breached')).toEqual([]);

    await reply(t, acme, conversation.id, 'Late answer');
    const [late] = await waitForLogged(t, acme, 'sla.breached', 1);
    expect(late.data).toMatchObject({ metric: 'first_response', dueAt: plus(conversation.createdAt, 60), policyId: policy.id });
    const answered = await settled(t, acme, conversation.id);
    expect(answered.sla).toMatchObject({ firstResponseDueAt: null, breaches: ['first_response'] });

    // An answer in time is no breach, after the fact or not.
    await inbound(t, acme, 'Another question', from);
    await settle(t);
    await reply(t, acme, conversation.id, 'Quick one');
    await settle(t);
    expect(await loggedOf(t, acme, 'sla.breached')).toHaveLength(1);
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ nextResponseDueAt: null, breaches: ['first_response'] });
  });
});

describe('SLA deadlines in two API processes on one database', () => {
  let deployment: Deployment;
  let a: TestApp;
  let b: TestApp;
  const clock = new TestClock();

  beforeAll(async () => {
    deployment = await startDeployment('sla', { THROTTLE_LIMIT: '100000' }, 2, clock);
    [a, b] = deployment.apps;
  });
  afterAll(() => deployment.stop());

  it('warns and breaches each of 40 conversations falling due in the same minutes exactly once, shared between them', async () => {
    const acme = await companyWithKey(a, 'Shared');
    const policy = await createPolicy(a, acme, { name: 'Minutes', firstResponseSeconds: 600, warnBeforeSeconds: 300 });
    const conversations = [];
    for (let batch = 0; batch < 8; batch += 1) {
      const sent = await Promise.all([0, 1, 2, 3, 4].map((index) => inbound(index % 2 ? a : b, acme, `Message ${batch}.${index}`)));
      conversations.push(...sent.map((received) => received.conversation));
    }
    await settle(a, b);
    // Every warning due (five minutes before its deadline), no deadline yet; then every deadline.
    advanceTo(clock, plus(conversations.at(-1)!.createdAt, 301));
    await waitForLogged(a, acme, 'sla.warning', 40, 30_000);
    advanceTo(clock, plus(conversations.at(-1)!.createdAt, 600));
    await waitForLogged(a, acme, 'sla.breached', 40, 30_000);
    await quietly();
    const byKind = async (type: 'sla.warning' | 'sla.breached') =>
      (await loggedOf(a, acme, type)).map((event) => (event.data as SlaDeadlineEventData).conversation.id).sort();
    const ids = conversations.map((conversation) => conversation.id).sort();
    expect(await byKind('sla.warning')).toEqual(ids);
    expect(await byKind('sla.breached')).toEqual(ids);
    for (const event of await loggedOf(a, acme, 'sla.breached')) expect(event.data).toMatchObject({ policyId: policy.id, metric: 'first_response' });
    expect(await a.model<DurableTimer>(DurableTimer.name).countDocuments({ companyId: acme.companyId })).toBe(0);
  }, 120_000);
});
