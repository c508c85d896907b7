import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { settle } from '../support/event-log.js';
import { advanceTo, companyWithKey, createPolicy, inbound, loggedOf, plus, quietly, settled, slaEvent, waitForLogged, type ServiceLevelsCompany } from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const MINUTE = 60_000;

/** A snoozed conversation's SLA clocks stop while it sleeps (contract sections 15 and 16). */
describe('SLA clocks and snoozes', () => {
  const clock = new TestClock();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
  });
  afterAll(() => t.close());

  /** A conversation under `policy`, queued (snoozable), with its SLA set. */
  async function queuedConversation(company: ServiceLevelsCompany) {
    const { conversation } = await inbound(t, company, 'Hello');
    await t.http.patch(`/v1/conversations/${conversation.id}`).set(company.auth).send({ status: 'queued' }).expect(200);
    await settle(t);
    return conversation;
  }
  const snooze = (company: ServiceLevelsCompany, id: string, until: Date) =>
    t.http.post(`/v1/conversations/${id}/snooze`).set(company.auth).send({ until: until.toISOString() }).expect(200);
  const sleepOf = async (company: ServiceLevelsCompany, id: string) =>
    (await t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: company.companyId }).lean())!.sleep!;

  it('asleep, the deadline shown assumes the wake-up at snoozedUntil; woken earlier, it comes back by the time slept', async () => {
    const acme = await companyWithKey(t, 'Sleepy');
    const policy = await createPolicy(t, acme, { name: 'Hour', firstResponseSeconds: 3600, resolutionSeconds: 7200 });
    const conversation = await queuedConversation(acme);
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ firstResponseDueAt: plus(conversation.createdAt, 3600) });

    clock.advance(10 * MINUTE);
    const until = new Date(clock.now().getTime() + 30 * MINUTE);
    await snooze(acme, conversation.id, until);
    const asleep = await settled(t, acme, conversation.id);
    const since = (await sleepOf(acme, conversation.id)).since!;
    const projected = until.getTime() - since.getTime();
    expect(asleep.sla).toMatchObject({
      firstResponseDueAt: new Date(Date.parse(conversation.createdAt) + 3600_000 + projected).toISOString(),
      resolutionDueAt: new Date(Date.parse(conversation.createdAt) + 7200_000 + projected).toISOString(),
    });

    clock.advance(10 * MINUTE);
    await t.http.post(`/v1/conversations/${conversation.id}/unsnooze`).set(acme.auth).expect(200);
    const [slept] = (await sleepOf(acme, conversation.id)).past;
    const sleptMs = slept.to.getTime() - slept.from.getTime();
    const due = new Date(Date.parse(conversation.createdAt) + 3600_000 + sleptMs).toISOString();
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ firstResponseDueAt: due });

    advanceTo(clock, due, -1000);
    await quietly();
    expect(await loggedOf(t, acme, 'sla.breached')).toEqual([]);
    advanceTo(clock, due);
    const [breach] = await waitForLogged(t, acme, 'sla.breached', 1);
    expect(breach.data).toEqual(slaEvent('first_response', due, policy.id, conversation.id));
  });

  it('a deadline that falls due while asleep waits for the wake-up by the snooze timer, then for the time it had left', async () => {
    const acme = await companyWithKey(t, 'Overslept');
    const policy = await createPolicy(t, acme, { name: 'Hour', firstResponseSeconds: 3600 });
    const conversation = await queuedConversation(acme);
    clock.advance(50 * MINUTE);
    const until = new Date(clock.now().getTime() + 60 * MINUTE);
    await snooze(acme, conversation.id, until);
    await settle(t);

    // The original deadline passes while it sleeps: nothing fires.
    advanceTo(clock, plus(conversation.createdAt, 3660));
    await quietly();
    expect(await loggedOf(t, acme, 'sla.breached')).toEqual([]);

    // The snooze timer wakes it at `until`; the ten minutes it had left run from there.
    advanceTo(clock, until);
    await waitFor(async () => (await loggedOf(t, acme, 'conversation.unsnoozed')).length === 1, { message: 'the wake-up' });
    const sleptMs = until.getTime() - (await sleepOf(acme, conversation.id)).past[0].from.getTime();
    const due = new Date(Date.parse(conversation.createdAt) + 3600_000 + sleptMs).toISOString();
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ firstResponseDueAt: due });
    advanceTo(clock, due);
    const [breach] = await waitForLogged(t, acme, 'sla.breached', 1);
    expect(breach.data).toEqual(slaEvent('first_response', due, policy.id, conversation.id));
  });

  it("the contact's message wakes it: the clocks run again from then", async () => {
    const acme = await companyWithKey(t, 'Woken');
    await createPolicy(t, acme, { name: 'Hour', firstResponseSeconds: 3600 });
    const from = { email: 'woken@example.com' };
    const { conversation } = await inbound(t, acme, 'Hello', from);
    await t.http.patch(`/v1/conversations/${conversation.id}`).set(acme.auth).send({ status: 'queued' }).expect(200);
    await settle(t);
    await snooze(acme, conversation.id, new Date(clock.now().getTime() + 120 * MINUTE));
    clock.advance(20 * MINUTE);
    await inbound(t, acme, 'Anyone?', from);
    const [slept] = (await sleepOf(acme, conversation.id)).past;
    const due = new Date(Date.parse(conversation.createdAt) + 3600_000 + (slept.to.getTime() - slept.from.getTime())).toISOString();
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ firstResponseDueAt: due });
  });
});
