import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { addAgent, createApiKey, registerCompany, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const HOUR = 3_600_000;

/**
 * A fixed-offset zone where it is about noon now, so that "today" began hours ago whenever the suite runs, and
 * instants just before and after local midnight can be placed in the past. Etc/GMT-N is UTC+N.
 */
function zoneNearNoon(now: Date): { timezone: string; midnight: Date } {
  const offsetHours = 12 - now.getUTCHours();
  const timezone = offsetHours === 0 ? 'UTC' : `Etc/GMT${offsetHours > 0 ? '-' : '+'}${Math.abs(offsetHours)}`;
  const local = new Date(now.getTime() + offsetHours * HOUR);
  const midnight = new Date(Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()) - offsetHours * HOUR);
  return { timezone, midnight };
}

describe('GET /v1/analytics/dashboard', () => {
  let t: TestApp;
  let dash: TestCompany;
  let globex: TestCompany;
  let dashKey: string;
  let midnight: Date;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    dash = await registerCompany(t.http, 'Dash');
    globex = await registerCompany(t.http, 'Globex');
    const zone = zoneNearNoon(new Date());
    midnight = zone.midnight;
    await t.http.patch('/v1/settings').set(dash.auth).send({ timezone: zone.timezone }).expect(200);
    dashKey = await createApiKey(t.http, dash, ['messages:write']);
  });
  afterAll(() => t.close());

  const dashboard = (company: TestCompany) => t.http.get('/v1/analytics/dashboard').set(company.auth).expect(200);
  const at = (offsetMs: number) => new Date(midnight.getTime() + offsetMs);

  async function setFields(model: string, company: TestCompany, id: string, fields: Record<string, Date>) {
    // The raw collection: Mongoose would refuse to change the immutable createdAt.
    const result = await t
      .model(model)
      .collection.updateOne({ _id: new Types.ObjectId(id), companyId: new Types.ObjectId(company.companyId) }, { $set: fields });
    expect(result.matchedCount).toBe(1);
  }

  /** An inbound message from a contact (its open conversation, or a new one in bot); answers the ids. */
  async function inbound(key: string, email: string): Promise<{ conversationId: string; messageId: string }> {
    const response = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { email }, text: 'Hi' }).expect(201);
    return { conversationId: response.body.data.conversation.id, messageId: response.body.data.message.id };
  }

  async function reply(company: TestCompany, conversationId: string): Promise<string> {
    const response = await t.http.post(`/v1/conversations/${conversationId}/messages`).set(company.auth).send({ text: 'Sure' }).expect(201);
    return response.body.id;
  }

  const handOff = (company: TestCompany, id: string) =>
    t.http.patch(`/v1/conversations/${id}`).set(company.auth).send({ status: 'queued' }).expect(200);
  const assign = (company: TestCompany, id: string, agentId: string) =>
    t.http.post(`/v1/conversations/${id}/assign`).set(company.auth).send({ agentId }).expect(200);
  const close = (company: TestCompany, id: string) =>
    t.http.post(`/v1/conversations/${id}/close`).set(company.auth).send({}).expect(200);

  it('starts empty, with the registering admin online', async () => {
    const response = await dashboard(dash);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({
      conversations: { bot: 0, human: 0, queued: 0 },
      closedToday: 0,
      queue: { length: 0, oldestWaitingSeconds: 0 },
      agents: { online: 1, away: 0, busy: 0, offline: 0 },
      messagesToday: { received: 0, sent: 0, failed: 0 },
      avgFirstResponseSecondsToday: null,
      generatedAt: expect.any(String),
    });
    expect(Math.abs(Date.parse(response.body.generatedAt) - Date.now())).toBeLessThan(60_000);
  });

  it('follows inbound messages, hand-offs, assignments, replies, closes and agent status changes', async () => {
    // Agents: four added online, then each moves; a deactivated one no longer counts.
    const [away, busy, online, leaving] = [
      await addAgent(t, dash, 'agent'),
      await addAgent(t, dash, 'agent'),
      await addAgent(t, dash, 'supervisor'),
      await addAgent(t, dash, 'agent'),
    ];
    await t.http.patch(`/v1/agents/${away.agentId}`).set(away.auth).send({ status: 'away' }).expect(200);
    await t.http.patch(`/v1/agents/${busy.agentId}`).set(busy.auth).send({ status: 'busy' }).expect(200);
    await t.http.patch(`/v1/agents/${dash.agentId}`).set(dash.auth).send({ status: 'offline' }).expect(200);
    await t.http.delete(`/v1/agents/${leaving.agentId}`).set(dash.auth).expect(200);

    // Six contacts write; the first twice.
    const contacts = Array.from({ length: 6 }, () => uniqueEmail('contact'));
    const conversations: string[] = [];
    for (const email of contacts) conversations.push((await inbound(dashKey, email)).conversationId);
    await inbound(dashKey, contacts[0]);
    const [first, second, third, fourth, , sixth] = conversations;

    await assign(dash, first, away.agentId); // bot → human
    await reply(dash, first);
    await reply(dash, first);
    await handOff(dash, second); // bot → queued
    await handOff(dash, third);
    await assign(dash, third, online.agentId); // queued → human
    await reply(dash, third);
    await close(dash, fourth); // bot → closed
    await handOff(dash, sixth);
    // The fifth stays with the bot.

    // First responses today: 45 s and 15 s (and the late one below).
    await setFields(Conversation.name, dash, first, { createdAt: at(1 * HOUR), firstResponseAt: at(1 * HOUR + 45_000) });
    await setFields(Conversation.name, dash, third, { createdAt: at(2 * HOUR), firstResponseAt: at(2 * HOUR + 15_000) });
    // The second has waited longest in the queue.
    const queuedAt = new Date(Date.now() - 600_000);
    await setFields(Conversation.name, dash, second, { queuedAt });
    await setFields(Conversation.name, dash, sixth, { queuedAt: new Date(Date.now() - 60_000) });

    // Yesterday: created, answered (after midnight) and closed a second before midnight, its messages too.
    const late = await inbound(dashKey, uniqueEmail('contact'));
    const lateReply = await reply(dash, late.conversationId);
    await close(dash, late.conversationId);
    await setFields(Conversation.name, dash, late.conversationId, {
      createdAt: at(-2 * HOUR),
      firstResponseAt: at(10 * 60_000),
      closedAt: at(-1000),
    });
    await setFields(Message.name, dash, late.messageId, { createdAt: at(-2 * HOUR) });
    await setFields(Message.name, dash, lateReply, { createdAt: at(-1000) });
    // Created yesterday, closed at midnight exactly: closed today.
    const overnight = await inbound(dashKey, uniqueEmail('contact'));
    await close(dash, overnight.conversationId);
    await setFields(Conversation.name, dash, overnight.conversationId, { createdAt: at(-HOUR), closedAt: at(0) });
    await setFields(Message.name, dash, overnight.messageId, { createdAt: at(-HOUR) });

    // Another company, busy in every way, counts for nothing here.
    const globexKey = await createApiKey(t.http, globex, ['messages:write']);
    const foreign = await inbound(globexKey, uniqueEmail('contact'));
    await handOff(globex, foreign.conversationId);
    await setFields(Conversation.name, globex, foreign.conversationId, { queuedAt: new Date(Date.now() - 10 * HOUR) });
    const foreignClosed = await inbound(globexKey, uniqueEmail('contact'));
    await reply(globex, foreignClosed.conversationId);
    await close(globex, foreignClosed.conversationId);
    await addAgent(t, globex, 'agent');

    const response = await dashboard(dash);
    const generatedAt = Date.parse(response.body.generatedAt);
    expect(response.body).toEqual({
      conversations: { bot: 1, human: 2, queued: 2 },
      closedToday: 2,
      queue: { length: 2, oldestWaitingSeconds: Math.floor((generatedAt - queuedAt.getTime()) / 1000) },
      agents: { online: 1, away: 1, busy: 1, offline: 1 },
      messagesToday: { received: 7, sent: 3, failed: 0 },
      // 45 s, 15 s, and yesterday's late conversation first answered today after 2 h 10 min.
      avgFirstResponseSecondsToday: (45 + 15 + 7800) / 3,
      generatedAt: response.body.generatedAt,
    });
    expect(response.body.queue.oldestWaitingSeconds).toBeGreaterThanOrEqual(600);

    const other = await dashboard(globex);
    expect(other.body).toMatchObject({
      conversations: { bot: 0, human: 0, queued: 1 },
      closedToday: 1,
      agents: { online: 2, away: 0, busy: 0, offline: 0 },
      messagesToday: { received: 2, sent: 1, failed: 0 },
    });
    expect(other.body.queue.oldestWaitingSeconds).toBeGreaterThanOrEqual(10 * 3600);
  });

  it('is open to every agent of the company, and to no one without a token', async () => {
    const agent = await addAgent(t, dash, 'agent');
    const response = await t.http.get('/v1/analytics/dashboard').set(agent.auth).expect(200);
    expect(response.body.conversations).toEqual({ bot: 1, human: 2, queued: 2 });
    const anonymous = await t.http.get('/v1/analytics/dashboard').expect(401);
    expect(anonymous.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('counts the messages that failed today, by when they failed, whenever they were sent', async () => {
    const before = (await dashboard(dash)).body.messagesToday;
    const report = (id: string, body: object, key = dashKey) =>
      t.http.post(`/api/external/messages/${id}/status`).set('x-api-key', key).send(body).expect(200);
    const { conversationId } = await inbound(dashKey, uniqueEmail('contact'));
    const [failedNow, failedAfterSent, failedYesterday, delivered, sentYesterday] = [
      await reply(dash, conversationId),
      await reply(dash, conversationId),
      await reply(dash, conversationId),
      await reply(dash, conversationId),
      await reply(dash, conversationId),
    ];
    await report(failedNow, { status: 'failed' });
    await report(failedAfterSent, { status: 'sent' });
    await report(failedAfterSent, { status: 'failed', error: { code: '470', message: 'Re-engagement window closed' } });
    await report(failedYesterday, { status: 'failed' });
    await setFields(Message.name, dash, failedYesterday, { 'delivery.updatedAt': at(-1000) });
    await report(delivered, { status: 'delivered' });
    // Sent yesterday, failed today: counted.
    await setFields(Message.name, dash, sentYesterday, { createdAt: at(-HOUR), 'delivery.updatedAt': at(-HOUR) });
    await report(sentYesterday, { status: 'failed', occurredAt: at(1000).toISOString() });
    // Another company's failure.
    const globexKey = await createApiKey(t.http, globex, ['messages:write']);
    const foreign = await inbound(globexKey, uniqueEmail('contact'));
    await report(await reply(globex, foreign.conversationId), { status: 'failed' }, globexKey);

    const after = (await dashboard(dash)).body.messagesToday;
    expect(after).toEqual({ received: before.received + 1, sent: before.sent + 4, failed: before.failed + 3 });
  });
});
