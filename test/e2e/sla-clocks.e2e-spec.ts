import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { DurableTimer } from '../../src/lanes/durable-timer.schema.js';
import { asSnapshot } from '../support/conversations.js';
import { settle } from '../support/event-log.js';
import { uniqueEmail } from '../support/factories.js';
import {
  advanceTo,
  companyWithKey,
  conversationOf,
  createPolicy,
  inbound,
  loggedOf,
  plus,
  quietly,
  reply,
  settled,
  slaEvent,
  waitForLogged,
} from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

/** SLA clocks on conversations (contract section 16): what starts, stops and fires them. */
describe('SLA clocks', () => {
  const clock = new TestClock();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
  });
  afterAll(() => t.close());

  const timersOf = (companyId: string) => t.model<DurableTimer>(DurableTimer.name).find({ companyId, kind: 'sla' }).lean();

  it('first response: due from opening, warned then breached once at the moment, met by the agent only', async () => {
    const acme = await companyWithKey(t, 'First');
    const policy = await createPolicy(t, acme, { name: 'Standard', firstResponseSeconds: 600, warnBeforeSeconds: 120 });
    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Hello from the bot' }).expect(200);
    const { conversation } = await inbound(t, acme, 'Hi there');
    expect(conversation.sla).toBeNull();

    const opened = await settled(t, acme, conversation.id);
    const dueAt = plus(conversation.createdAt, 600);
    expect(opened.sla).toEqual({ policyId: policy.id, firstResponseDueAt: dueAt, nextResponseDueAt: null, resolutionDueAt: null, breaches: [] });
    // The welcome is the bot's: no answer, no first response.
    expect(opened.firstResponseAt).toBeNull();
    expect((await timersOf(acme.companyId)).map((timer) => timer._id).sort()).toEqual(
      [`sla:${conversation.id}:first_response:breach`, `sla:${conversation.id}:first_response:warning`],
    );

    advanceTo(clock, dueAt, -121_000);
    await quietly();
    expect(await loggedOf(t, acme, 'sla.warning', 'sla.breached')).toEqual([]);

    advanceTo(clock, dueAt, -119_000);
    const [warning] = await waitForLogged(t, acme, 'sla.warning', 1);
    expect(warning.data).toEqual(slaEvent('first_response', dueAt, policy.id, conversation.id));
    expect(clock.now().getTime() - (new Date(dueAt).getTime() - 120_000)).toBeLessThan(5000);

    advanceTo(clock, dueAt);
    const [breach] = await waitForLogged(t, acme, 'sla.breached', 1);
    expect(breach.data).toEqual(slaEvent('first_response', dueAt, policy.id, conversation.id));
    expect((breach.data as { conversation: { sla: unknown } }).conversation.sla).toMatchObject({ breaches: ['first_response'] });
    await quietly();
    expect(await loggedOf(t, acme, 'sla.warning', 'sla.breached')).toHaveLength(2);

    await reply(t, acme, conversation.id);
    const answered = await settled(t, acme, conversation.id);
    expect(answered.sla).toEqual({ policyId: policy.id, firstResponseDueAt: null, nextResponseDueAt: null, resolutionDueAt: null, breaches: ['first_response'] });
    expect(await timersOf(acme.companyId)).toEqual([]);
  });

  it('answered in time: no warning, no breach, its timers gone', async () => {
    const acme = await companyWithKey(t, 'InTime');
    await createPolicy(t, acme, { name: 'Fast', firstResponseSeconds: 300, warnBeforeSeconds: 60, resolutionSeconds: 7200 });
    const { conversation } = await inbound(t, acme, 'Quick question');
    await settle(t);
    await reply(t, acme, conversation.id);
    const answered = await settled(t, acme, conversation.id);
    expect(answered.sla).toMatchObject({ firstResponseDueAt: null, resolutionDueAt: plus(conversation.createdAt, 7200), breaches: [] });
    expect((await timersOf(acme.companyId)).map((timer) => timer._id).sort()).toEqual([`sla:${conversation.id}:resolution:breach`, `sla:${conversation.id}:resolution:warning`]);

    advanceTo(clock, plus(conversation.createdAt, 400));
    await quietly();
    expect(await loggedOf(t, acme, 'sla.warning', 'sla.breached')).toEqual([]);

    await t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({}).expect(200);
    const closed = await settled(t, acme, conversation.id);
    expect(closed.sla).toMatchObject({ firstResponseDueAt: null, nextResponseDueAt: null, resolutionDueAt: null, breaches: [] });
    expect(await timersOf(acme.companyId)).toEqual([]);
    advanceTo(clock, plus(conversation.createdAt, 7300));
    await quietly();
    expect(await loggedOf(t, acme, 'sla.warning', 'sla.breached')).toEqual([]);
  });

  it("flows' bot messages and auto-replies are no answer", async () => {
    const acme = await companyWithKey(t, 'Bots');
    await createPolicy(t, acme, { name: 'Std', firstResponseSeconds: 900 });
    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Welcome!' }).expect(200);
    await t.http
      .post('/v1/flows')
      .set(acme.auth)
      .send({ name: 'Echo', trigger: { type: 'inbound_message' }, steps: [{ type: 'send_message', text: 'A bot answer' }] })
      .expect(201);
    const { conversation } = await inbound(t, acme, 'Anyone?');
    const after = await settled(t, acme, conversation.id);
    const messages = (await t.http.get(`/v1/conversations/${conversation.id}/messages`).set(acme.auth).expect(200)).body.data;
    expect(messages.map((message: { senderType: string; text: string }) => [message.senderType, message.text])).toEqual([
      ['contact', 'Anyone?'],
      ['bot', 'Welcome!'],
      ['bot', 'A bot answer'],
    ]);
    expect(after.firstResponseAt).toBeNull();
    expect(after.sla?.firstResponseDueAt).toBe(plus(conversation.createdAt, 900));
  });

  it('next response: each contact message after an answer starts a cycle; one breach per cycle', async () => {
    const acme = await companyWithKey(t, 'Next');
    const policy = await createPolicy(t, acme, { name: 'Chat', nextResponseSeconds: 300 });
    const from = { email: uniqueEmail('customer') };
    const { conversation } = await inbound(t, acme, 'First', from);
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ nextResponseDueAt: null });

    await reply(t, acme, conversation.id, 'Hello');
    const second = await inbound(t, acme, 'Still there?', from);
    await inbound(t, acme, 'Hello??', from);
    const waiting = await settled(t, acme, conversation.id);
    // The clock runs from the first unanswered message.
    const firstDue = plus(second.message.createdAt, 300);
    expect(waiting.sla).toMatchObject({ nextResponseDueAt: firstDue, breaches: [] });

    advanceTo(clock, firstDue);
    const [breach] = await waitForLogged(t, acme, 'sla.breached', 1);
    expect(breach.data).toEqual(slaEvent('next_response', firstDue, policy.id, conversation.id));

    await reply(t, acme, conversation.id, 'Sorry!');
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ nextResponseDueAt: null, breaches: ['next_response'] });

    const third = await inbound(t, acme, 'And another thing', from);
    const secondDue = plus(third.message.createdAt, 300);
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ nextResponseDueAt: secondDue });
    advanceTo(clock, secondDue);
    const breaches = await waitForLogged(t, acme, 'sla.breached', 2);
    expect(breaches[1].data).toEqual(slaEvent('next_response', secondDue, policy.id, conversation.id));
    await quietly();
    expect(await loggedOf(t, acme, 'sla.breached')).toHaveLength(2);
  });

  it('resolution: due from opening, met by the close; a close after the deadline has breached it once', async () => {
    const acme = await companyWithKey(t, 'Resolve');
    const policy = await createPolicy(t, acme, { name: 'Day', resolutionSeconds: 3600 });
    const { conversation } = await inbound(t, acme, 'Help');
    const dueAt = plus(conversation.createdAt, 3600);
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ resolutionDueAt: dueAt });
    advanceTo(clock, dueAt);
    const [breach] = await waitForLogged(t, acme, 'sla.breached', 1);
    expect(breach.data).toEqual(slaEvent('resolution', dueAt, policy.id, conversation.id));
    await t.http.post(`/v1/conversations/${conversation.id}/close`).set(acme.auth).send({}).expect(200);
    expect((await settled(t, acme, conversation.id)).sla).toMatchObject({ resolutionDueAt: null, breaches: ['resolution'] });
    expect(await loggedOf(t, acme, 'sla.breached')).toHaveLength(1);
  });

  it('matching: the oldest active policy whose conditions hold; again on a priority change', async () => {
    const acme = await companyWithKey(t, 'Match');
    await createPolicy(t, acme, { name: 'Inactive', isActive: false, firstResponseSeconds: 60 });
    const vip = await createPolicy(t, acme, { name: 'High on WhatsApp', conditions: { priorities: ['high'], channels: ['WhatsApp'] }, firstResponseSeconds: 120 });
    const chat = await createPolicy(t, acme, { name: 'Web chat', conditions: { channels: ['web'] }, firstResponseSeconds: 1800 });
    const rest = await createPolicy(t, acme, { name: 'The rest', firstResponseSeconds: 3600 });

    const onWeb = (await inbound(t, acme, 'From the site', { email: uniqueEmail('c') }, 'web')).conversation;
    const onWhatsApp = (await inbound(t, acme, 'From the phone', { phone: '+14155550123' }, 'whatsapp')).conversation;
    expect((await settled(t, acme, onWeb.id)).sla).toMatchObject({ policyId: chat.id, firstResponseDueAt: plus(onWeb.createdAt, 1800) });
    expect((await conversationOf(t, acme, onWhatsApp.id)).sla).toMatchObject({ policyId: rest.id, firstResponseDueAt: plus(onWhatsApp.createdAt, 3600) });

    const patched = await t.http.patch(`/v1/conversations/${onWhatsApp.id}`).set(acme.auth).send({ priority: 'high' }).expect(200);
    await settle(t);
    const [changed] = await loggedOf(t, acme, 'conversation.priority_changed');
    expect(changed.data).toEqual({ conversation: asSnapshot(patched.body), previousPriority: 'medium' });
    expect((await settled(t, acme, onWhatsApp.id)).sla).toMatchObject({ policyId: vip.id, firstResponseDueAt: plus(onWhatsApp.createdAt, 120) });

    // The same priority again changes nothing and emits nothing.
    await t.http.patch(`/v1/conversations/${onWhatsApp.id}`).set(acme.auth).send({ priority: 'high' }).expect(200);
    await settle(t);
    expect(await loggedOf(t, acme, 'conversation.priority_changed')).toHaveLength(1);
    await t.http.patch(`/v1/conversations/${onWhatsApp.id}`).set(acme.auth).send({ priority: 'low' }).expect(200);
    expect((await settled(t, acme, onWhatsApp.id)).sla).toMatchObject({ policyId: rest.id });
  });

  it('a priority change to no matching policy ends the SLA, and keeps the targets already missed', async () => {
    const acme = await companyWithKey(t, 'Unmatch');
    const urgent = await createPolicy(t, acme, { name: 'Urgent', conditions: { priorities: ['medium'] }, firstResponseSeconds: 60 });
    const first = (await inbound(t, acme, 'One')).conversation;
    const second = (await inbound(t, acme, 'Two')).conversation;
    await settle(t);
    advanceTo(clock, plus(first.createdAt, 61));
    await waitForLogged(t, acme, 'sla.breached', 2);
    await t.http.patch(`/v1/conversations/${first.id}`).set(acme.auth).send({ priority: 'low' }).expect(200);
    expect((await settled(t, acme, first.id)).sla).toEqual({ policyId: null, firstResponseDueAt: null, nextResponseDueAt: null, resolutionDueAt: null, breaches: ['first_response'] });

    const third = (await inbound(t, acme, 'Three')).conversation;
    await settle(t);
    await t.http.patch(`/v1/conversations/${third.id}`).set(acme.auth).send({ priority: 'low' }).expect(200);
    expect((await settled(t, acme, third.id)).sla).toBeNull();
    expect((await conversationOf(t, acme, second.id)).sla).toMatchObject({ policyId: urgent.id, breaches: ['first_response'] });
  });

  it('keeps companies apart: a policy applies to its own company only', async () => {
    const acme = await companyWithKey(t, 'Own');
    const globex = await companyWithKey(t, 'Other');
    await createPolicy(t, acme, { name: 'Acme only', firstResponseSeconds: 60 });
    const theirs = (await inbound(t, globex, 'Hello')).conversation;
    expect((await settled(t, globex, theirs.id)).sla).toBeNull();
    advanceTo(clock, plus(theirs.createdAt, 120));
    await quietly();
    expect(await loggedOf(t, globex, 'sla.warning', 'sla.breached')).toEqual([]);
  });

  it('a deadline falls due while its conversation is still to be answered: the stored SLA shows the breach', async () => {
    const acme = await companyWithKey(t, 'Stored');
    await createPolicy(t, acme, { name: 'Std', firstResponseSeconds: 30 });
    const { conversation } = await inbound(t, acme, 'Hi');
    await settle(t);
    advanceTo(clock, plus(conversation.createdAt, 30));
    const stored = () => t.model<Conversation>(Conversation.name).findOne({ _id: conversation.id, companyId: acme.companyId }).lean();
    await waitFor(async () => (await stored())?.sla?.breaches.length === 1, { message: 'the breach on the conversation' });
    expect((await stored())?.sla?.clocks.first_response).toMatchObject({ breached: true, warned: false });
  });
});
