import { afterAll, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { REPLY_WINDOW_CLOSING } from '../../src/channels/reply-window-warnings.js';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { DomainEvent } from '../../src/events/domain-events.js';
import { DurableTimers } from '../../src/lanes/durable-timers.js';
import { LaneStore } from '../../src/lanes/lane-store.js';
import { MEDIA_BUCKET } from '../../src/media/media-storage.js';
import { Message } from '../../src/messages/message.schema.js';
import * as samples from '../fixtures/media/samples.js';
import { approvedTemplate, createChannel } from '../support/channels.js';
import { EventRecorder, settle } from '../support/event-log.js';
import { createApiKey, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const pause = (ms = 700) => new Promise((resolve) => setTimeout(resolve, ms));

interface Inbound {
  conversationId: string;
  /** The window the message opened: its time + the channel's window. */
  replyWindowExpiresAt: string | null;
  createdAt: string;
}

/** The reply window (contract section 17): opened by inbound messages, kept on every free-form message, warned of before it closes. */
describe('reply windows', () => {
  const clock = new TestClock();
  let t: TestApp;
  let recorder: EventRecorder;
  let acme: TestCompany;
  let globex: TestCompany;
  const keys: Record<string, { messages: string; templates: string }> = {};

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
    recorder = new EventRecorder(t);
    ({ acme, globex } = await twoCompanies(t.http));
    for (const company of [acme, globex]) {
      keys[company.companyId] = {
        messages: await createApiKey(t.http, company, ['messages:write']),
        templates: await createApiKey(t.http, company, ['templates:manage']),
      };
    }
    await createChannel(t, acme, { key: 'whatsapp', type: 'whatsapp', name: 'WhatsApp' });
    await createChannel(t, acme, { key: 'sms', type: 'sms', name: 'SMS' });
    await approvedTemplate(t, acme, keys[acme.companyId].templates, { channel: 'whatsapp', name: 'follow_up', body: 'Hi {{1}}, are you still there?' });
  });
  beforeEach(() => recorder.clear());
  afterAll(() => t.close());

  /** A contact's message through Interface B, at the test clock's time. */
  async function inbound(company: TestCompany, channel = 'whatsapp', email = uniqueEmail('customer')): Promise<Inbound & { email: string }> {
    const response = await t.http
      .post('/api/external/messages')
      .set('x-api-key', keys[company.companyId].messages)
      .send({ from: { email }, text: 'Hello?', channel })
      .expect(201);
    const { conversation, message } = response.body.data;
    return { conversationId: conversation.id, replyWindowExpiresAt: conversation.replyWindowExpiresAt, createdAt: message.createdAt, email };
  }

  const sendText = (company: TestCompany, conversationId: string, text = 'We are on it') =>
    t.http.post(`/v1/conversations/${conversationId}/messages`).set(company.auth).send({ text });
  const storedMessages = (company: TestCompany, conversationId: string) =>
    t.model<Message>(Message.name).countDocuments({ companyId: company.companyId, conversationId });
  const closingEvents = async (conversationId: string) =>
    (await recorder.events()).filter(
      (event): event is DomainEvent<'conversation.reply_window_closing'> =>
        event.type === 'conversation.reply_window_closing' && event.data.conversation.id === conversationId,
    );

  function expectWindowClosed(response: { body: Record<string, unknown>; headers: Record<string, string> }, conversationId: string | null, closedAt: string | null) {
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      type: expect.stringMatching(/reply-window-closed$/),
      title: 'Reply window closed',
      status: 409,
      statusCode: 409,
      error: 'Conflict',
      closedAt,
      conversationId,
      channel: 'whatsapp',
    });
    expect(response.body.detail).toMatch(/Only an approved template can be sent until the contact writes again$/);
  }

  describe('the window', () => {
    it('opens with an inbound message: replyWindowExpiresAt is the message time + 24 hours, stored in the same write', async () => {
      const { conversationId, replyWindowExpiresAt, createdAt } = await inbound(acme);
      expect(replyWindowExpiresAt).toBe(new Date(new Date(createdAt).getTime() + 24 * HOUR).toISOString());
      const stored = await t.model<Conversation>(Conversation.name).findOne({ _id: conversationId, companyId: acme.companyId }).lean();
      expect(stored?.replyWindowExpiresAt?.toISOString()).toBe(replyWindowExpiresAt);
      expect((await t.http.get(`/v1/conversations/${conversationId}`).set(acme.auth).expect(200)).body.replyWindowExpiresAt).toBe(replyWindowExpiresAt);
      const [received] = (await recorder.events()).filter((event) => event.type === 'message.received');
      expect(received.data.conversation.replyWindowExpiresAt).toBe(replyWindowExpiresAt);
    });

    it('lets agent text through while open; after it closes: 409 reply-window-closed with the time it closed, nothing stored', async () => {
      const { conversationId, replyWindowExpiresAt } = await inbound(acme);
      await sendText(acme, conversationId).expect(201);
      clock.advance(24 * HOUR - MINUTE);
      await sendText(acme, conversationId, 'Still in time').expect(201);
      clock.advance(2 * MINUTE);
      await recorder.clear();
      const refused = await sendText(acme, conversationId, 'Too late');
      expect(refused.status).toBe(409);
      expectWindowClosed(refused, conversationId, replyWindowExpiresAt);
      expect(refused.body.detail).toBe(
        `The reply window of conversation ${conversationId} on channel whatsapp closed at ${replyWindowExpiresAt}. Only an approved template can be sent until the contact writes again`,
      );
      expect(await storedMessages(acme, conversationId)).toBe(3);
      expect((await recorder.events()).filter((event) => event.type === 'message.sent')).toEqual([]);
    });

    it('refuses media outside the window with the same 409, and keeps no file', async () => {
      const { conversationId } = await inbound(acme);
      clock.advance(25 * HOUR);
      const files = () => t.model(Conversation.name).db.collection(`${MEDIA_BUCKET}.files`).countDocuments();
      const before = await files();
      const refused = await t.http
        .post('/v1/messages/send-media')
        .set(acme.auth)
        .field('conversationId', conversationId)
        .attach('file', samples.pdf(), { filename: 'receipt.pdf', contentType: 'application/pdf' });
      expect(refused.status).toBe(409);
      expectWindowClosed(refused, conversationId, expect.any(String) as unknown as string);
      expect(await files()).toBe(before);
      expect(await storedMessages(acme, conversationId)).toBe(1);
    });

    it('lets an approved template through after the window, and a new inbound message opens the window again', async () => {
      const { conversationId, email } = await inbound(acme);
      clock.advance(30 * HOUR);
      await sendText(acme, conversationId).expect(409);
      const template = await t.http
        .post(`/v1/conversations/${conversationId}/messages`)
        .set(acme.auth)
        .send({ template: { name: 'follow_up', language: 'en', variables: ['Grace'] } })
        .expect(201);
      expect(template.body).toMatchObject({ type: 'template', text: 'Hi Grace, are you still there?' });

      const again = await inbound(acme, 'whatsapp', email);
      expect(again.conversationId).toBe(conversationId);
      expect(new Date(again.replyWindowExpiresAt!).getTime()).toBe(new Date(again.createdAt).getTime() + 24 * HOUR);
      await sendText(acme, conversationId, 'Welcome back').expect(201);
    });

    it('is not open on a conversation the contact has not written in: an agent-started one answers 409 with closedAt null', async () => {
      const contact = await t.http.post('/v1/contacts').set(acme.auth).send({ email: uniqueEmail('lead'), name: 'Lead' }).expect(201);
      const conversations = () => t.model<Conversation>(Conversation.name).countDocuments({ companyId: acme.companyId, contactId: contact.body.id });
      const withMessage = await t.http
        .post('/v1/conversations')
        .set(acme.auth)
        .send({ contactId: contact.body.id, channel: 'WhatsApp', message: 'Hello from us' });
      expect(withMessage.status).toBe(409);
      expectWindowClosed(withMessage, null, null);
      expect(await conversations()).toBe(0);

      const started = await t.http.post('/v1/conversations').set(acme.auth).send({ contactId: contact.body.id, channel: 'whatsapp' }).expect(201);
      expect(started.body.replyWindowExpiresAt).toBeNull();
      const refused = await sendText(acme, started.body.id);
      expect(refused.status).toBe(409);
      expectWindowClosed(refused, started.body.id, null);
      expect(refused.body.detail).toMatch(/^There is no open reply window for conversation .* on channel whatsapp: the contact has not written on it yet\./);
    });

    it('does not exist on a key without a channel record, nor on a channel without replyWindowHours: text goes at any time', async () => {
      for (const channel of ['telegram', 'sms']) {
        const { conversationId, replyWindowExpiresAt } = await inbound(acme, channel);
        expect(replyWindowExpiresAt).toBeNull();
        clock.advance(200 * HOUR);
        await sendText(acme, conversationId).expect(201);
      }
      const started = await t.http
        .post('/v1/conversations')
        .set(acme.auth)
        .send({ contactId: (await t.http.post('/v1/contacts').set(acme.auth).send({ name: 'Nobody' }).expect(201)).body.id, channel: 'web', message: 'Hi' })
        .expect(201);
      expect(started.body.lastMessageAt).not.toBeNull();
    });

    it("is the company's own: Globex has no whatsapp channel record, so its whatsapp conversations have no window", async () => {
      const { conversationId, replyWindowExpiresAt } = await inbound(globex);
      expect(replyWindowExpiresAt).toBeNull();
      clock.advance(48 * HOUR);
      await sendText(globex, conversationId).expect(201);
    });

    it('closes no more once the channel loses its window (replyWindowHours null), and applies a new window from the next inbound message', async () => {
      const channel = await createChannel(t, acme, { key: 'whatsapp:2', type: 'whatsapp', name: 'Second number' });
      const { conversationId, email } = await inbound(acme, 'whatsapp:2');
      clock.advance(25 * HOUR);
      await sendText(acme, conversationId).expect(409);
      await t.http.patch(`/v1/channels/${channel.id}`).set(acme.auth).send({ replyWindowHours: null }).expect(200);
      await sendText(acme, conversationId).expect(201);
      await t.http.patch(`/v1/channels/${channel.id}`).set(acme.auth).send({ replyWindowHours: 2 }).expect(200);
      const again = await inbound(acme, 'whatsapp:2', email);
      expect(new Date(again.replyWindowExpiresAt!).getTime() - new Date(again.createdAt).getTime()).toBe(2 * HOUR);
    });
  });

  describe('flows', () => {
    const createFlow = async (steps: unknown[]) => (await t.http.post('/v1/flows').set(acme.auth).send({ name: 'After hours', steps }).expect(201)).body.id as string;
    const execute = (flowId: string, conversationId: string) =>
      t.http.post(`/v1/flows/${flowId}/execute`).set(acme.auth).send({ conversationId }).expect(200);

    it('fails a send_message step outside the window with that error, and stops the run; a send_template step succeeds', async () => {
      const { conversationId } = await inbound(acme);
      clock.advance(25 * HOUR);
      const textFlow = await createFlow([{ type: 'send_message', text: 'Are you there?' }, { type: 'add_tags', tags: ['followed-up'] }]);
      const failed = await execute(textFlow, conversationId);
      expect(failed.body).toMatchObject({ status: 'failed', steps: [{ type: 'send_message', status: 'failed' }, { type: 'add_tags', status: 'skipped' }] });
      expect(failed.body.steps[0].error).toMatch(/^The reply window of conversation .* closed at .*Only an approved template can be sent/);
      expect(await storedMessages(acme, conversationId)).toBe(1);
      expect((await t.http.get(`/v1/conversations/${conversationId}`).set(acme.auth).expect(200)).body.tags).toEqual([]);

      const templateFlow = await createFlow([
        { type: 'send_template', template: { name: 'follow_up', language: 'en', variables: ['there'] } },
        { type: 'add_tags', tags: ['followed-up'] },
      ]);
      const completed = await execute(templateFlow, conversationId);
      expect(completed.body).toMatchObject({ status: 'completed', steps: [{ type: 'send_template', status: 'completed' }, { type: 'add_tags', status: 'completed' }] });
      const messages = (await t.http.get(`/v1/conversations/${conversationId}/messages`).set(acme.auth).expect(200)).body.data;
      expect(messages.at(-1)).toMatchObject({ type: 'template', senderType: 'bot', senderId: templateFlow, text: 'Hi there, are you still there?' });
    });

    it('stores send_template steps as given and fails one naming an unapproved template when it runs', async () => {
      const flow = await t.http
        .post('/v1/flows')
        .set(acme.auth)
        .send({ name: 'Unknown template', steps: [{ type: 'send_template', template: { name: 'nope', language: 'en' } }] })
        .expect(201);
      expect(flow.body.steps).toEqual([{ type: 'send_template', template: { name: 'nope', language: 'en' } }]);
      const { conversationId } = await inbound(acme);
      const run = await execute(flow.body.id, conversationId);
      expect(run.body.steps[0]).toEqual({ type: 'send_template', status: 'failed', error: 'template nope in en on channel whatsapp does not exist' });
      await t.http
        .post('/v1/flows')
        .set(acme.auth)
        .send({ name: 'Bad', steps: [{ type: 'send_template', template: { name: 'Bad Name', language: 'en' } }] })
        .expect(400)
        .expect((response) => expect(response.body.errors[0].field).toBe('steps.0.template.name'));
    });
  });

  describe('conversation.reply_window_closing', () => {
    const timerDue = async (company: TestCompany, conversationId: string) => {
      await settle(t);
      return t.app.get(DurableTimers).dueAt(company.companyId, REPLY_WINDOW_CLOSING, conversationId);
    };

    it('fires replyWindowWarningMinutes (60) before the window closes, once per window, with the conversation and closesAt', async () => {
      expect((await t.http.get('/v1/settings').set(acme.auth).expect(200)).body.replyWindowWarningMinutes).toBe(60);
      const { conversationId, replyWindowExpiresAt } = await inbound(acme);
      const expiresAt = new Date(replyWindowExpiresAt!).getTime();
      expect(await timerDue(acme, conversationId)).toEqual(new Date(expiresAt - HOUR));

      clock.advance(expiresAt - HOUR - clock.now().getTime() - MINUTE);
      await pause();
      expect(await closingEvents(conversationId)).toEqual([]);

      clock.advance(MINUTE);
      await waitFor(async () => (await closingEvents(conversationId)).length === 1, { message: 'the reply window warning' });
      const [event] = await closingEvents(conversationId);
      expect(event.data).toEqual({ conversation: expect.objectContaining({ id: conversationId, channel: 'whatsapp', replyWindowExpiresAt }), closesAt: replyWindowExpiresAt });
      const feed = await t.http.get('/v1/events?types=REPLY_WINDOW_CLOSING').set(acme.auth).expect(200);
      expect(feed.body.data.map((logged: { id: string }) => logged.id)).toContain(event.id);

      clock.advance(30 * MINUTE);
      await pause();
      clock.advance(2 * HOUR);
      await pause();
      expect(await closingEvents(conversationId)).toHaveLength(1);
      expect(await timerDue(acme, conversationId)).toBeNull();
    });

    it('is moved by a new inbound message: nothing at the old time, one warning before the new end', async () => {
      const first = await inbound(acme);
      clock.advance(12 * HOUR);
      const second = await inbound(acme, 'whatsapp', first.email);
      expect(second.conversationId).toBe(first.conversationId);
      const newEnd = new Date(second.replyWindowExpiresAt!).getTime();
      expect(await timerDue(acme, first.conversationId)).toEqual(new Date(newEnd - HOUR));

      clock.advance(new Date(first.replyWindowExpiresAt!).getTime() - clock.now().getTime());
      await pause();
      expect(await closingEvents(first.conversationId)).toEqual([]);

      clock.advance(newEnd - HOUR - clock.now().getTime());
      await waitFor(async () => (await closingEvents(first.conversationId)).length === 1, { message: 'the moved warning' });
      expect((await closingEvents(first.conversationId))[0].data.closesAt).toBe(second.replyWindowExpiresAt);
      clock.advance(2 * HOUR);
      await pause();
      expect(await closingEvents(first.conversationId)).toHaveLength(1);
    });

    it('warns once when its timer fires again after a crash: the event id is the window’s', async () => {
      const { conversationId, replyWindowExpiresAt } = await inbound(acme);
      expect(await timerDue(acme, conversationId)).not.toBeNull();
      const remove = LaneStore.prototype.remove;
      let crashes = 0;
      const spy = jest.spyOn(LaneStore.prototype, 'remove').mockImplementation(async function (this: LaneStore<never>, lane) {
        // The process dies after the warning is logged, before its timer is removed: the lease runs out, it fires again.
        if (String(lane._id).endsWith(conversationId) && crashes === 0) {
          crashes += 1;
          throw new Error('process killed');
        }
        return remove.call(this, lane);
      });
      try {
        clock.advance(new Date(replyWindowExpiresAt!).getTime() - HOUR - clock.now().getTime());
        await waitFor(async () => crashes === 1 && (await closingEvents(conversationId)).length === 1, { message: 'the first firing' });
        clock.advance(MINUTE);
        await waitFor(async () => (await timerDue(acme, conversationId)) === null, { message: 'the second firing' });
        expect(spy.mock.calls.filter(([lane]) => String(lane._id).endsWith(conversationId))).toHaveLength(2);
        expect(await closingEvents(conversationId)).toHaveLength(1);
      } finally {
        spy.mockRestore();
      }
    });

    it('takes replyWindowWarningMinutes from the settings (1..1440)', async () => {
      for (const bad of [0, 1441, 1.5, null]) {
        await t.http.patch('/v1/settings').set(acme.auth).send({ replyWindowWarningMinutes: bad }).expect(400);
      }
      await t.http.patch('/v1/settings').set(acme.auth).send({ replyWindowWarningMinutes: 120 }).expect(200);
      try {
        const { conversationId, replyWindowExpiresAt } = await inbound(acme);
        expect(await timerDue(acme, conversationId)).toEqual(new Date(new Date(replyWindowExpiresAt!).getTime() - 2 * HOUR));
      } finally {
        await t.http.patch('/v1/settings').set(acme.auth).send({ replyWindowWarningMinutes: 60 }).expect(200);
      }
    });

    it('says nothing for a conversation closed before the warning, nor on a channel without a window', async () => {
      const { conversationId, replyWindowExpiresAt } = await inbound(acme);
      const noWindow = await inbound(acme, 'sms');
      await t.http.post(`/v1/conversations/${conversationId}/close`).set(acme.auth).send({}).expect(200);
      expect(await timerDue(acme, noWindow.conversationId)).toBeNull();
      clock.advance(new Date(replyWindowExpiresAt!).getTime() - clock.now().getTime());
      await waitFor(async () => (await timerDue(acme, conversationId)) === null, { message: 'the timer to fire' });
      expect(await closingEvents(conversationId)).toEqual([]);
    });

    it('belongs to its company: Globex sees no warning of Acme', async () => {
      const { conversationId, replyWindowExpiresAt } = await inbound(acme);
      clock.advance(new Date(replyWindowExpiresAt!).getTime() - HOUR - clock.now().getTime());
      await waitFor(async () => (await closingEvents(conversationId)).length === 1, { message: 'the warning' });
      const [event] = await closingEvents(conversationId);
      expect(event.companyId).toBe(acme.companyId);
      const globexFeed = await t.http.get('/v1/events?types=conversation.reply_window_closing').set(globex.auth).expect(200);
      expect(globexFeed.body.data).toEqual([]);
    });
  });
});
