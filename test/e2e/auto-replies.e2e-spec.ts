import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { ConflictException } from '@nestjs/common';
import type { MessageView } from '../../src/messages/message.view.js';
import { MessagesService } from '../../src/messages/messages.service.js';
import { DataMigration } from '../../src/database/migrations/data-migration.schema.js';
import { EventConsumerLane } from '../../src/events/consumers/event-consumer-lane.schema.js';
import { Settings } from '../../src/settings/settings.schema.js';
import { SettingsService } from '../../src/settings/settings.service.js';
import { settle } from '../support/event-log.js';
import { uniqueEmail } from '../support/factories.js';
import { advanceTo, companyWithKey, inbound, loggedOf, reply, type ServiceLevelsCompany } from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';

const weekdays = (open: string, close: string) => ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'].map((day) => ({ day, open, close }));

/** Welcome and out-of-hours replies (contract section 16): sent by the bot through the event log, once each. */
describe('auto-replies', () => {
  const clock = new TestClock();
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  afterAll(() => t.close());

  const messagesOf = async (company: ServiceLevelsCompany, id: string): Promise<MessageView[]> =>
    (await t.http.get(`/v1/conversations/${id}/messages`).set(company.auth).expect(200)).body.data;
  const said = (messages: MessageView[]) => messages.map((message) => `${message.senderType}: ${message.text}`);

  it('a new company sends nothing; with a welcome, the bot sends it on the message that opens a conversation, once', async () => {
    const acme = await companyWithKey(t, 'Welcome');
    const silent = (await inbound(t, acme, 'Hello?')).conversation;
    await settle(t);
    expect(said(await messagesOf(acme, silent.id))).toEqual(['contact: Hello?']);

    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Hi! How can we help?' }).expect(200);
    const from = { email: uniqueEmail('customer') };
    const { conversation } = await inbound(t, acme, 'First message', from);
    await inbound(t, acme, 'Second message', from);
    await settle(t);
    const messages = await messagesOf(acme, conversation.id);
    // The second message may be stored before or after the welcome, which follows the first.
    expect(said(messages).sort()).toEqual(['bot: Hi! How can we help?', 'contact: First message', 'contact: Second message']);
    expect(said(messages)[0]).toBe('contact: First message');
    const welcome = messages.find((message) => message.senderType === 'bot')!;
    expect(welcome).toMatchObject({ direction: 'outbound', senderId: null, delivery: { status: 'pending' } });
    const sent = await loggedOf(t, acme, 'message.sent');
    expect(sent.map((event) => (event.data as { message: MessageView }).message.id)).toEqual([welcome.id]);
    // Only the contact's opening message: the existing conversation (opened earlier) gets none.
    expect(said(await messagesOf(acme, silent.id))).toEqual(['contact: Hello?']);
  });

  it('a company created before welcome messages were sent keeps quiet: the former default is cleared once, a chosen text kept', async () => {
    const before = await companyWithKey(t, 'Before');
    const chose = await companyWithKey(t, 'Chose');
    const settings = t.model<Settings>(Settings.name);
    await settings.updateOne({ companyId: before.companyId }, { $set: { welcomeMessage: 'Hi! Thanks for reaching out. How can we help?' } });
    await settings.updateOne({ companyId: chose.companyId }, { $set: { welcomeMessage: 'Welcome to Chose!' } });
    await t.model<DataMigration>(DataMigration.name).deleteOne({ _id: 'settings.unchosen-welcome-message' });
    await t.app.get(SettingsService).onApplicationBootstrap();
    expect((await settings.findOne({ companyId: before.companyId }).lean())?.welcomeMessage).toBe('');
    expect((await settings.findOne({ companyId: chose.companyId }).lean())?.welcomeMessage).toBe('Welcome to Chose!');
    const { conversation } = await inbound(t, before, 'Hello');
    await settle(t);
    expect(said(await messagesOf(before, conversation.id))).toEqual(['contact: Hello']);
  });

  it('out of hours: once per conversation and closed period, not while open', async () => {
    const acme = await companyWithKey(t, 'Hours');
    await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ timezone: 'Europe/Paris', businessHours: { enabled: true, schedule: weekdays('09:00', '17:00') }, outOfHoursMessage: 'We are closed; we answer from 9:00.' })
      .expect(200);
    const from = { phone: '+33600000001' };
    // Saturday 8 March 2031 at noon in Paris: closed until Monday 09:00.
    advanceTo(clock, '2031-03-08T11:00:00Z');
    const { conversation } = await inbound(t, acme, 'Are you there?', from);
    await inbound(t, acme, 'Hello??', from);
    await settle(t);
    expect(said(await messagesOf(acme, conversation.id)).filter((line) => line.startsWith('bot'))).toEqual(['bot: We are closed; we answer from 9:00.']);

    // Monday 10:00: open, no reply.
    advanceTo(clock, '2031-03-10T09:00:00Z');
    await inbound(t, acme, 'Good morning', from);
    await settle(t);
    expect(said(await messagesOf(acme, conversation.id)).filter((line) => line.startsWith('bot'))).toHaveLength(1);

    // Monday 18:00: the next closed period, a reply again.
    advanceTo(clock, '2031-03-10T17:00:00Z');
    await inbound(t, acme, 'Evening question', from);
    await settle(t);
    expect(said(await messagesOf(acme, conversation.id)).filter((line) => line.startsWith('bot'))).toHaveLength(2);
  });

  it('with flows: the welcome goes first, the flow still runs', async () => {
    const acme = await companyWithKey(t, 'Flows');
    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Welcome!' }).expect(200);
    await t.http
      .post('/v1/flows')
      .set(acme.auth)
      .send({ name: 'Pricing', trigger: { type: 'inbound_message', keywords: ['price'] }, steps: [{ type: 'send_message', text: 'Plans start at 10 euros.' }, { type: 'handoff' }] })
      .expect(201);
    for (let round = 0; round < 3; round += 1) {
      const { conversation } = await inbound(t, acme, 'What is the price?');
      await settle(t);
      expect(said(await messagesOf(acme, conversation.id))).toEqual(['contact: What is the price?', 'bot: Welcome!', 'bot: Plans start at 10 euros.']);
    }
  });

  it('a refused send (a reply window closed: 409) is skipped, not retried', async () => {
    const acme = await companyWithKey(t, 'Refused');
    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Welcome!' }).expect(200);
    const send = jest.spyOn(t.app.get(MessagesService), 'sendText').mockRejectedValueOnce(new ConflictException('The reply window is closed'));
    const { conversation } = await inbound(t, acme, 'Hi');
    await settle(t);
    expect(send).toHaveBeenCalledTimes(1);
    expect(said(await messagesOf(acme, conversation.id))).toEqual(['contact: Hi']);
    const lane = await t.model<EventConsumerLane>(EventConsumerLane.name).findOne({ companyId: acme.companyId, _id: `inbound-flows:${acme.companyId}` }).lean();
    expect(lane).toMatchObject({ failures: 0, lastError: null });
  });

  it('an agent-started conversation gets no welcome when the contact answers', async () => {
    const acme = await companyWithKey(t, 'Outbound');
    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Welcome!' }).expect(200);
    const email = uniqueEmail('customer');
    const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ email }).expect(201);
    const started = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id, message: 'Your order shipped' }).expect(201);
    await inbound(t, acme, 'Thanks!', { email });
    await settle(t);
    expect(said(await messagesOf(acme, started.body.id))).toEqual(['agent: Your order shipped', 'contact: Thanks!']);
    await reply(t, acme, started.body.id, 'You are welcome');
  });
});
