import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Message } from '../../src/messages/message.schema.js';
import { DurableTimer } from '../../src/lanes/durable-timer.schema.js';
import { createApiKey, registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

const DAY = 86_400_000;

describe('privacy: retention of closed conversations (contract section 23)', () => {
  const clock = new TestClock();
  let t: TestApp;
  let acme: TestCompany;
  let key: string;
  let phone = 4155550300;

  beforeAll(async () => {
    t = await createTestApp({ clock });
    acme = await registerCompany(t.http, 'Acme');
    key = await createApiKey(t.http, acme, ['messages:write']);
  });
  afterAll(() => t.close());

  /** A conversation with one message from a new contact, closed. */
  const closedConversation = async (text: string): Promise<{ id: string; contactId: string }> => {
    phone += 1;
    const inbound = await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: `+1${phone}` }, text })
      .expect(201);
    const { id, contactId } = inbound.body.data.conversation;
    await t.http.post(`/v1/conversations/${id}/close`).set(acme.auth).send({}).expect(200);
    return { id, contactId };
  };
  const texts = async (conversationId: string) =>
    (
      await t
        .model<Message>(Message.name)
        .find({ companyId: acme.companyId, conversationId: new Types.ObjectId(conversationId) })
        .lean()
    ).map((message) => message.text);
  const timerDue = async (conversationId: string) =>
    (
      await t
        .model<DurableTimer>(DurableTimer.name)
        .findOne({ _id: `retention:${conversationId}`, companyId: acme.companyId })
        .lean()
    )?.dueAt ?? null;

  it('refuses a period out of range, naming the field, and changes nothing', async () => {
    const response = await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ retention: { closedConversationDays: 7 } })
      .expect(400);
    expect(JSON.stringify(response.body)).toContain('closedConversationDays');
    expect((await t.http.get('/v1/settings').set(acme.auth).expect(200)).body.retention).toEqual({ closedConversationDays: null });
  });

  it('erases the messages of a conversation closed that long, keeps its metadata, skips a contact under legal hold', async () => {
    await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ retention: { closedConversationDays: 30 } })
      .expect(200);
    const kept = await closedConversation('quillfeather one');
    const held = await closedConversation('quillfeather held');
    await t.http.patch(`/v1/contacts/${held.contactId}`).set(acme.auth).send({ legalHold: true }).expect(200);
    const due = await waitFor(() => timerDue(kept.id), { message: 'the retention timer' });
    expect(due.getTime() - Date.now()).toBeGreaterThan(29 * DAY);

    clock.advance(31 * DAY);
    await waitFor(async () => (await texts(kept.id)).every((text) => text === null), { timeoutMs: 15_000, message: 'the erased messages' });
    const conversation = await t.http.get(`/v1/conversations/${kept.id}`).set(acme.auth).expect(200);
    expect(conversation.body).toMatchObject({ id: kept.id, status: 'closed', closedAt: expect.any(String) });
    await waitFor(async () => (await timerDue(held.id)) === null, { timeoutMs: 15_000, message: 'the held conversation timer to fire' });
    expect(await texts(held.id)).toEqual(['quillfeather held']);
  });

  it('erases a held conversation whose period passed once the hold is lifted, on its retention timer', async () => {
    const held = await closedConversation('quillfeather lifted');
    await t.http.patch(`/v1/contacts/${held.contactId}`).set(acme.auth).send({ legalHold: true }).expect(200);
    await waitFor(() => timerDue(held.id), { message: 'the retention timer' });
    clock.advance(31 * DAY);
    await waitFor(async () => (await timerDue(held.id)) === null, { timeoutMs: 15_000, message: 'the held conversation timer to fire' });
    expect(await texts(held.id)).toEqual(['quillfeather lifted']);

    await t.http.patch(`/v1/contacts/${held.contactId}`).set(acme.auth).send({ legalHold: false }).expect(200);
    await waitFor(async () => (await texts(held.id)).every((text) => text === null), { timeoutMs: 15_000, message: 'the erased messages' });
    await waitFor(async () => (await timerDue(held.id)) === null, { timeoutMs: 15_000, message: 'the re-armed timer done' });
  });

  it('moves every timer when the setting changes, without scanning the conversations', async () => {
    await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ retention: { closedConversationDays: null } })
      .expect(200);
    const later = await closedConversation('quillfeather later');
    const farAway = await waitFor(() => timerDue(later.id), { message: 'the retention timer' });
    expect(farAway.getTime() - clock.now().getTime()).toBeGreaterThan(3000 * DAY);

    await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ retention: { closedConversationDays: 60 } })
      .expect(200);
    // Due now, then set again by its firing for the new period after the close.
    const closedAt = Date.parse((await t.http.get(`/v1/conversations/${later.id}`).set(acme.auth).expect(200)).body.closedAt);
    await waitFor(async () => (await timerDue(later.id))?.getTime() === closedAt + 60 * DAY, {
      timeoutMs: 15_000,
      message: 'the timer moved to the new period',
    });
    expect(await texts(later.id)).toEqual(['quillfeather later']);
    clock.advance(61 * DAY);
    await waitFor(async () => (await texts(later.id)).every((text) => text === null), { timeoutMs: 15_000, message: 'the erased messages' });
  });
});
