import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import type { ReportedStatus } from '../../src/messages/delivery-status.js';
import { Message } from '../../src/messages/message.schema.js';
import { EMPTY_FIGURES as ZERO } from '../support/analytics.js';
import { createApiKey, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** An outbound message of the fixture: when it was sent, then its reports in order, each with the channel's time. */
interface SentSpec {
  sentAt: string;
  reports: [ReportedStatus, string][];
}

/**
 * Europe/Paris, 2025-03-24 (Mon) .. 2025-04-06 (Sun), with the change to summer time on 30 March (UTC+1 before,
 * UTC+2 after). The comment after each instant is its local date. Every report goes through the API with its
 * `occurredAt`, after the message's send time was moved into the range.
 */
const PARIS: Record<string, SentSpec> = {
  // Delivered on the 24th, read the next day: delivered counts on the 24th only.
  m1: {
    sentAt: '2025-03-24T10:00:00Z',
    reports: [
      ['sent', '2025-03-24T10:00:05Z'], // 03-24
      ['delivered', '2025-03-24T10:01:00Z'], // 03-24
      ['read', '2025-03-25T08:00:00Z'], // 03-25
      ['delivered', '2025-03-25T09:00:00Z'], // late: changes nothing
    ],
  },
  // Read without a delivered report, just after local midnight on the DST day: delivered and read on the 30th.
  m2: { sentAt: '2025-03-29T22:30:00Z', reports: [['read', '2025-03-29T23:30:00Z']] }, // sent 03-29 23:30, read 03-30 00:30
  // Failed from pending.
  m3: { sentAt: '2025-03-30T10:00:00Z', reports: [['failed', '2025-03-30T10:00:30Z']] }, // 03-30
  // Sent on the last local hour of March, failed in April.
  m4: {
    sentAt: '2025-03-31T21:00:00Z', // 03-31 23:00
    reports: [
      ['sent', '2025-03-31T21:00:10Z'],
      ['failed', '2025-03-31T22:30:00Z'], // 04-01 00:30
    ],
  },
  // Sent and delivered before the range, read inside it: only the read counts.
  m5: {
    sentAt: '2025-03-20T10:00:00Z',
    reports: [
      ['delivered', '2025-03-20T12:00:00Z'], // outside
      ['read', '2025-03-24T09:00:00Z'], // 03-24 10:00
    ],
  },
  // Delivered in the last second of the range, read at the first instant after it.
  m6: {
    sentAt: '2025-04-06T20:00:00Z', // 04-06 22:00
    reports: [
      ['delivered', '2025-04-06T21:59:59Z'], // 04-06 23:59:59
      ['read', '2025-04-06T22:00:00Z'], // 04-07 00:00, outside
    ],
  },
  // Delivered, never read.
  m7: { sentAt: '2025-04-01T10:00:00Z', reports: [['delivered', '2025-04-02T10:00:00Z']] }, // sent 04-01, delivered 04-02
  // Never reported: pending.
  m8: { sentAt: '2025-04-03T10:00:00Z', reports: [] }, // 04-03
};

describe('GET /v1/analytics/metrics: delivery figures', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Europe/Paris' }).expect(200);
    await buildFixture(acme, PARIS);
    // Another company's deliveries inside the range: never counted for Acme.
    await buildFixture(globex, {
      g1: { sentAt: '2025-03-25T10:00:00Z', reports: [['read', '2025-03-25T11:00:00Z']] },
      g2: { sentAt: '2025-03-26T10:00:00Z', reports: [['failed', '2025-03-26T10:00:01Z']] },
    });
  });
  afterAll(() => t.close());

  /** Sends each message through the API, moves its send time into the range, then reports through the API. */
  async function buildFixture(company: TestCompany, specs: Record<string, SentSpec>): Promise<void> {
    const key = await createApiKey(t.http, company, ['messages:write']);
    const inbound = await t.http.post('/api/external/messages').set('x-api-key', key).send({ from: { email: uniqueEmail('contact') }, text: 'Hi' }).expect(201);
    const conversationId = inbound.body.data.conversation.id;
    for (const spec of Object.values(specs)) {
      const sent = await t.http.post(`/v1/conversations/${conversationId}/messages`).set(company.auth).send({ text: 'On it' }).expect(201);
      const sentAt = new Date(spec.sentAt);
      // The raw collection: Mongoose would refuse to change the immutable createdAt.
      const moved = await t
        .model(Message.name)
        .collection.updateOne({ _id: new Types.ObjectId(sent.body.id) }, { $set: { createdAt: sentAt, 'delivery.updatedAt': sentAt } });
      expect(moved.modifiedCount).toBe(1);
      for (const [status, occurredAt] of spec.reports) {
        await t.http.post(`/api/external/messages/${sent.body.id}/status`).set('x-api-key', key).send({ status, occurredAt }).expect(200);
      }
    }
  }

  const metrics = (company: TestCompany, query: Record<string, string>) =>
    t.http.get('/v1/analytics/metrics').query(query).set(company.auth).expect(200);

  it('counts delivered, read and failed by local day, where each was reached', async () => {
    const response = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06' });
    const isEmpty = (bucket: Record<string, unknown>) => Object.entries(ZERO).every(([name, value]) => bucket[name] === value);
    const busy = response.body.series.filter((bucket: Record<string, unknown>) => !isEmpty(bucket));
    expect(busy).toEqual([
      { ...ZERO, period: '2025-03-24', messagesSent: 1, messagesDelivered: 1, messagesRead: 1 },
      { ...ZERO, period: '2025-03-25', messagesRead: 1 },
      { ...ZERO, period: '2025-03-29', messagesSent: 1 },
      { ...ZERO, period: '2025-03-30', messagesSent: 1, messagesDelivered: 1, messagesRead: 1, messagesFailed: 1 },
      { ...ZERO, period: '2025-03-31', messagesSent: 1 },
      { ...ZERO, period: '2025-04-01', messagesSent: 1, messagesFailed: 1 },
      { ...ZERO, period: '2025-04-02', messagesDelivered: 1 },
      { ...ZERO, period: '2025-04-03', messagesSent: 1 },
      { ...ZERO, period: '2025-04-06', messagesSent: 1, messagesDelivered: 1 },
    ]);
    expect(response.body.series).toHaveLength(14);
    expect(response.body.totals).toEqual({ ...ZERO, messagesSent: 7, messagesDelivered: 4, messagesRead: 3, messagesFailed: 2 });
  });

  it('counts them by ISO week and by month', async () => {
    const weeks = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'week' });
    expect(weeks.body.series).toEqual([
      { ...ZERO, period: '2025-03-24', messagesSent: 3, messagesDelivered: 2, messagesRead: 3, messagesFailed: 1 },
      { ...ZERO, period: '2025-03-31', messagesSent: 4, messagesDelivered: 2, messagesFailed: 1 },
    ]);
    const months = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'month' });
    expect(months.body.series).toEqual([
      { ...ZERO, period: '2025-03-01', messagesSent: 4, messagesDelivered: 2, messagesRead: 3, messagesFailed: 1 },
      { ...ZERO, period: '2025-04-01', messagesSent: 3, messagesDelivered: 2, messagesFailed: 1 },
    ]);
  });

  it('reads the days in the time zone of the settings: the same reports by UTC days', async () => {
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'UTC' }).expect(200);
    try {
      const response = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06' });
      const period = (date: string) => response.body.series.find((bucket: { period: string }) => bucket.period === date);
      // m2 was read at 23:30 UTC on the 29th; m4 failed at 22:30 UTC on the 31st; m6 was read inside the UTC range.
      expect(period('2025-03-29')).toEqual({ ...ZERO, period: '2025-03-29', messagesSent: 1, messagesDelivered: 1, messagesRead: 1 });
      expect(period('2025-03-31')).toEqual({ ...ZERO, period: '2025-03-31', messagesSent: 1, messagesFailed: 1 });
      expect(period('2025-04-06')).toEqual({ ...ZERO, period: '2025-04-06', messagesSent: 1, messagesDelivered: 1, messagesRead: 1 });
      expect(response.body.totals).toEqual({ ...ZERO, messagesSent: 7, messagesDelivered: 4, messagesRead: 4, messagesFailed: 2 });
    } finally {
      await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Europe/Paris' }).expect(200);
    }
  });

  it("counts only the caller's company", async () => {
    const response = await metrics(globex, { startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'month' });
    expect(response.body.series).toEqual([
      { ...ZERO, period: '2025-03-01', messagesSent: 2, messagesDelivered: 1, messagesRead: 1, messagesFailed: 1 },
      { ...ZERO, period: '2025-04-01' },
    ]);
  });

  it('documents what each delivery figure counts', async () => {
    const { body: document } = await t.http.get('/docs-json').expect(200);
    const figures = document.components.schemas.MetricsFiguresView;
    expect(figures.required).toEqual(expect.arrayContaining(['messagesDelivered', 'messagesRead', 'messagesFailed']));
    expect(figures.properties.messagesDelivered.description).toMatch(/read without a delivered report/);
  });
});
