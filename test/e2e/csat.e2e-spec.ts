import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import type { MessageView } from '../../src/messages/message.view.js';
import { settle } from '../support/event-log.js';
import { createApiKey } from '../support/factories.js';
import { advanceTo, companyWithKey, inbound, loggedOf, plus, type ServiceLevelsCompany } from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';

/** Satisfaction surveys and ratings (contract section 16). */
describe('CSAT', () => {
  const clock = new TestClock();
  let t: TestApp;
  let acme: ServiceLevelsCompany;
  let globex: ServiceLevelsCompany;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
    acme = await companyWithKey(t, 'Acme');
    globex = await companyWithKey(t, 'Globex');
    await t.http.patch('/v1/settings').set(acme.auth).send({ csat: { enabled: true } }).expect(200);
  });
  afterAll(() => t.close());

  const rate = (company: ServiceLevelsCompany, id: string, body: Record<string, unknown>, key = company.key) =>
    t.http.post(`/api/external/conversations/${id}/csat`).set('x-api-key', key).send(body);
  const close = (company: ServiceLevelsCompany, id: string) => t.http.post(`/v1/conversations/${id}/close`).set(company.auth).send({}).expect(200);

  async function closedConversation(company = acme, channel?: string): Promise<string> {
    const { conversation } = await inbound(t, company, 'Thanks for the help', undefined, channel);
    await close(company, conversation.id);
    await settle(t);
    return conversation.id;
  }

  it('on close, the bot sends the survey on the closed conversation, as an ordinary message', async () => {
    const id = await closedConversation();
    const messages: MessageView[] = (await t.http.get(`/v1/conversations/${id}/messages`).set(acme.auth).expect(200)).body.data;
    const survey = messages.at(-1)!;
    expect(survey).toMatchObject({ direction: 'outbound', senderType: 'bot', text: 'How would you rate our help, from 1 to 5?', delivery: { status: 'pending' } });
    const [sent] = await loggedOf(t, acme, 'message.sent');
    expect(sent.data).toMatchObject({ message: survey, conversation: { id, status: 'closed' } });
    const stored = await t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: acme.companyId }).lean();
    expect(stored?.csat).toMatchObject({ rating: null, submittedAt: null });
    expect(stored!.csat!.expiresAt.getTime() - stored!.closedAt!.getTime()).toBe(7 * 86_400_000);
    // Still closed to agents.
    await t.http.post(`/v1/conversations/${id}/messages`).set(acme.auth).send({ text: 'One more thing' }).expect(400);
  });

  it('takes the rating once: 200 with the conversation, csat.submitted; a repeat is 409', async () => {
    const id = await closedConversation();
    const response = await rate(acme, id, { rating: 5, comment: 'Quick and kind' }).expect(200);
    expect(response.body).toEqual({ success: true, data: expect.objectContaining({ id, status: 'closed', csat: { rating: 5, comment: 'Quick and kind', submittedAt: expect.any(String) } }) });
    await settle(t);
    const [submitted] = await loggedOf(t, acme, 'csat.submitted');
    expect(submitted.data).toEqual({ conversation: response.body.data, rating: 5, comment: 'Quick and kind' });

    const repeat = await rate(acme, id, { rating: 1 }).expect(409);
    expect(repeat.body).toEqual({ success: false, error: expect.stringMatching(/rated already/) });
    expect((await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200)).body.csat).toMatchObject({ rating: 5 });
    expect(await loggedOf(t, acme, 'csat.submitted')).toHaveLength(1);
  });

  it('400 when not awaiting a rating: open, closed without a survey, or after seven days', async () => {
    const open = (await inbound(t, acme, 'Still open')).conversation;
    expect((await rate(acme, open.id, { rating: 4 }).expect(400)).body.error).toMatch(/not awaiting a rating/);

    const { conversation: noSurvey } = await inbound(t, globex, 'Bye');
    await close(globex, noSurvey.id);
    await settle(t);
    expect((await rate(globex, noSurvey.id, { rating: 4 }).expect(400)).body.error).toMatch(/no survey was sent/);

    const late = await closedConversation();
    const stored = await t.model<Conversation>(Conversation.name).findOne({ _id: late, companyId: acme.companyId }).lean();
    advanceTo(clock, plus(stored!.csat!.expiresAt, 1));
    expect((await rate(acme, late, { rating: 4 }).expect(400)).body.error).toMatch(/expired/);
    expect(await loggedOf(t, acme, 'csat.submitted')).toHaveLength(1);
  });

  it('bad ratings are 400 naming the field; nothing stored', async () => {
    const id = await closedConversation();
    const cases: [Record<string, unknown>, string][] = [
      [{ rating: 0 }, 'rating'],
      [{ rating: 6 }, 'rating'],
      [{ rating: 4.5 }, 'rating'],
      [{ rating: '5' }, 'rating'],
      [{}, 'rating'],
      [{ rating: 3, comment: 'x'.repeat(2001) }, 'comment'],
      [{ rating: 3, stars: 3 }, 'stars'],
    ];
    for (const [body, field] of cases) {
      const response = await rate(acme, id, body).expect(400);
      expect(response.body.success).toBe(false);
      expect(response.body.error).toMatch(new RegExp(`\\b${field}\\b`));
    }
    expect((await t.http.get(`/v1/conversations/${id}`).set(acme.auth).expect(200)).body.csat).toBeNull();
  });

  it('needs messages:write; another company’s conversation is 404', async () => {
    const id = await closedConversation();
    const eventsKey = await createApiKey(t.http, acme, ['events:read']);
    expect((await rate(acme, id, { rating: 5 }, eventsKey).expect(403)).body.success).toBe(false);
    expect((await rate(globex, id, { rating: 5 }).expect(404)).body.success).toBe(false);
    await rate(acme, 'not-an-id', { rating: 5 }).expect(404);
    await rate(acme, id, { rating: 5 }, 'pk_wrong').expect(401);
    await rate(acme, id, { rating: 3 }).expect(200);
  });

  it("a key limited to channels rates only their conversations: another channel's is 403 and keeps awaiting the real rating", async () => {
    const id = await closedConversation(acme, 'sms');
    const whatsappKey = await createApiKey(t.http, acme, ['messages:write'], ['whatsapp']);
    const before = await t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: acme.companyId }).lean();
    const refused = await rate(acme, id, { rating: 1 }, whatsappKey).expect(403);
    expect(refused.body).toEqual({ success: false, error: `This API key is limited to the channels whatsapp; conversation ${id} is on sms` });
    const after = await t.model<Conversation>(Conversation.name).findOne({ _id: id, companyId: acme.companyId }).lean();
    expect(after).toEqual(before);
    expect(after?.csat).toMatchObject({ rating: null, submittedAt: null });
    await settle(t);
    const submitted = await loggedOf(t, acme, 'csat.submitted');
    expect(submitted.filter((event) => (event.data as { conversation: { id: string } }).conversation.id === id)).toEqual([]);
    // The customer's real rating, through the connector of that channel, is still taken.
    expect((await rate(acme, id, { rating: 4 }).expect(200)).body.data.csat).toMatchObject({ rating: 4 });

    const own = await closedConversation(acme, 'whatsapp');
    expect((await rate(acme, own, { rating: 5 }, whatsappKey).expect(200)).body.data.csat).toMatchObject({ rating: 5 });
  });
});
