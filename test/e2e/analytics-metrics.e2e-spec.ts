import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { FlowExecution } from '../../src/flows/flow-execution.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { EMPTY_FIGURES as EMPTY } from '../support/analytics.js';
import { addAgent, createApiKey, twoCompanies, uniqueEmail, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** A conversation of the fixture: its instants, and those of its messages in the order they are sent. */
interface ConversationSpec {
  createdAt: string;
  firstResponseAt: string | null;
  closedAt: string | null;
  inbound: string[];
  outbound: string[];
}

/**
 * Europe/Paris, 2025-03-24 (Mon) .. 2025-04-06 (Sun): two ISO weeks, the end of March, and the change to summer time
 * on Sunday 2025-03-30 (02:00 → 03:00, so that local day lasts 23 hours). Paris is UTC+1 before, UTC+2 after.
 * The comment after each instant is its local date.
 */
const PARIS: Record<string, ConversationSpec> = {
  // Created at the first local instant of the range (a UTC 23 March); closed in the last second of the 29th.
  c1: {
    createdAt: '2025-03-23T23:00:00Z', // 03-24 00:00
    firstResponseAt: '2025-03-23T23:00:30Z', // 30 s
    closedAt: '2025-03-29T22:59:59Z', // 03-29 23:59:59, resolution 518 399 s
    inbound: ['2025-03-23T23:00:00Z', '2025-03-29T22:59:00Z'], // 03-24, 03-29
    outbound: ['2025-03-23T23:00:30Z'], // 03-24
  },
  // The whole 23-hour day of the DST change, first second to last.
  c2: {
    createdAt: '2025-03-29T23:00:00Z', // 03-30 00:00 (UTC+1)
    firstResponseAt: '2025-03-29T23:01:30Z', // 90 s
    closedAt: '2025-03-30T21:59:59Z', // 03-30 23:59:59 (UTC+2), resolution 82 799 s
    inbound: ['2025-03-29T23:00:00Z'], // 03-30
    outbound: ['2025-03-29T23:01:30Z', '2025-03-30T21:59:59Z'], // 03-30, 03-30
  },
  // The last minute of March, answered in April: the first response counts where it happened.
  c3: {
    createdAt: '2025-03-31T21:59:00Z', // 03-31 23:59
    firstResponseAt: '2025-03-31T22:01:00Z', // 04-01 00:01, 120 s
    closedAt: null,
    inbound: ['2025-03-31T21:59:00Z'], // 03-31
    outbound: ['2025-03-31T22:01:00Z'], // 04-01
  },
  // Created before the range, closed inside it: counted as closed where it was closed.
  c4: {
    createdAt: '2025-03-20T10:00:00Z', // 03-20, outside
    firstResponseAt: null,
    closedAt: '2025-04-01T08:00:00Z', // 04-01, resolution 1 029 600 s
    inbound: ['2025-03-20T10:00:00Z'], // outside
    outbound: [],
  },
  // Created in the last local hour of the range, closed at the first instant after it.
  c5: {
    createdAt: '2025-04-06T21:00:00Z', // 04-06 23:00
    firstResponseAt: null,
    closedAt: '2025-04-06T22:00:00Z', // 04-07 00:00, outside
    inbound: ['2025-04-06T21:00:00Z'], // 04-06
    outbound: [],
  },
  // Still 6 April in UTC, already 7 April in Paris: outside the range.
  c6: {
    createdAt: '2025-04-06T22:00:00Z', // 04-07 00:00
    firstResponseAt: '2025-04-06T22:00:10Z',
    closedAt: null,
    inbound: ['2025-04-06T22:00:00Z'],
    outbound: ['2025-04-06T22:00:10Z'],
  },
};
/** Flow runs: on c3 at 03-30 01:30 (UTC+1) and 04-02, on c6 at 04-07 00:00 (outside). */
const PARIS_RUNS: [string, string][] = [
  ['c3', '2025-03-30T00:30:00Z'],
  ['c3', '2025-04-02T12:00:00Z'],
  ['c6', '2025-04-06T22:00:00Z'],
];

describe('GET /v1/analytics/metrics', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    ({ acme, globex } = await twoCompanies(t.http));
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Europe/Paris' }).expect(200);
    const acmeIds = await buildFixture(acme, PARIS, PARIS_RUNS);
    expect(Object.keys(acmeIds)).toHaveLength(6);
    // Another company's activity in the middle of the same range (UTC company): never counted for Acme.
    await buildFixture(
      globex,
      {
        g1: {
          createdAt: '2025-03-25T12:00:00Z',
          firstResponseAt: '2025-03-25T12:00:05Z',
          closedAt: '2025-03-26T12:00:00Z',
          inbound: ['2025-03-25T12:00:00Z'],
          outbound: ['2025-03-25T12:00:05Z'],
        },
        g2: {
          createdAt: '2025-03-27T12:00:00Z',
          firstResponseAt: null,
          closedAt: null,
          inbound: ['2025-03-27T12:00:00Z'],
          outbound: [],
        },
      },
      [['g2', '2025-03-27T13:00:00Z']],
    );
  });
  afterAll(() => t.close());

  async function setFields(model: string, company: TestCompany, id: string, fields: Record<string, Date | null>) {
    // The raw collection: Mongoose would refuse to change the immutable createdAt.
    const result = await t
      .model(model)
      .collection.updateOne(
        { _id: new Types.ObjectId(id), companyId: new Types.ObjectId(company.companyId) },
        { $set: fields },
      );
    expect(result.matchedCount).toBe(1);
  }

  const instant = (value: string | null) => (value === null ? null : new Date(value));

  /** Creates the conversations, messages and flow runs through the API, then moves them to the chosen instants. */
  async function buildFixture(
    company: TestCompany,
    specs: Record<string, ConversationSpec>,
    runs: [string, string][],
  ): Promise<Record<string, string>> {
    const key = await createApiKey(t.http, company, ['messages:write']);
    const ids: Record<string, string> = {};
    for (const [name, spec] of Object.entries(specs)) {
      const email = uniqueEmail('contact');
      const messageIds: string[] = [];
      for (const _ of spec.inbound) {
        const received = await t.http
          .post('/api/external/messages')
          .set('x-api-key', key)
          .send({ from: { email }, text: 'Hello' })
          .expect(201);
        ids[name] = received.body.data.conversation.id;
        messageIds.push(received.body.data.message.id);
      }
      for (const _ of spec.outbound) {
        const sent = await t.http
          .post(`/v1/conversations/${ids[name]}/messages`)
          .set(company.auth)
          .send({ text: 'On it' })
          .expect(201);
        messageIds.push(sent.body.id);
      }
      if (spec.closedAt) await t.http.post(`/v1/conversations/${ids[name]}/close`).set(company.auth).send({}).expect(200);
      const times = [...spec.inbound, ...spec.outbound];
      for (const [index, messageId] of messageIds.entries()) {
        await setFields(Message.name, company, messageId, { createdAt: instant(times[index]) });
      }
      await setFields(Conversation.name, company, ids[name], {
        createdAt: instant(spec.createdAt),
        firstResponseAt: instant(spec.firstResponseAt),
        closedAt: instant(spec.closedAt),
      });
    }
    if (runs.length > 0) {
      const flow = await t.http
        .post('/v1/flows')
        .set(company.auth)
        .send({ name: 'Tag it', steps: [{ type: 'add_tags', tags: ['seen'] }] })
        .expect(201);
      for (const [name, at] of runs) {
        const run = await t.http
          .post(`/v1/flows/${flow.body.id}/execute`)
          .set(company.auth)
          .send({ conversationId: ids[name] })
          .expect(200);
        await setFields(FlowExecution.name, company, run.body.executionId, { createdAt: instant(at) });
      }
    }
    return ids;
  }

  const metrics = (company: TestCompany, query: Record<string, string>) =>
    t.http.get('/v1/analytics/metrics').query(query).set(company.auth);

  describe('in a time zone with a DST change inside the range', () => {
    it('counts by local day: the 23-hour day whole, month end, range edges, empty days present', async () => {
      const response = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06' }).expect(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.body).toEqual({
        startDate: '2025-03-24',
        endDate: '2025-04-06',
        granularity: 'day',
        timezone: 'Europe/Paris',
        series: [
          { period: '2025-03-24', ...EMPTY, conversationsCreated: 1, messagesReceived: 1, messagesSent: 1, avgFirstResponseSeconds: 30 },
          { period: '2025-03-25', ...EMPTY },
          { period: '2025-03-26', ...EMPTY },
          { period: '2025-03-27', ...EMPTY },
          { period: '2025-03-28', ...EMPTY },
          { period: '2025-03-29', ...EMPTY, conversationsClosed: 1, messagesReceived: 1, avgResolutionSeconds: 518399 },
          {
            period: '2025-03-30',
            ...EMPTY,
            conversationsCreated: 1,
            conversationsClosed: 1,
            messagesReceived: 1,
            messagesSent: 2,
            flowsExecuted: 1,
            avgFirstResponseSeconds: 90,
            avgResolutionSeconds: 82799,
          },
          { period: '2025-03-31', ...EMPTY, conversationsCreated: 1, messagesReceived: 1 },
          {
            period: '2025-04-01',
            ...EMPTY,
            conversationsClosed: 1,
            messagesSent: 1,
            avgFirstResponseSeconds: 120,
            avgResolutionSeconds: 1029600,
          },
          { period: '2025-04-02', ...EMPTY, flowsExecuted: 1 },
          { period: '2025-04-03', ...EMPTY },
          { period: '2025-04-04', ...EMPTY },
          { period: '2025-04-05', ...EMPTY },
          { period: '2025-04-06', ...EMPTY, conversationsCreated: 1, messagesReceived: 1 },
        ],
        totals: {
          ...EMPTY,
          conversationsCreated: 4,
          conversationsClosed: 3,
          messagesReceived: 5,
          messagesSent: 4,
          flowsExecuted: 2,
          avgFirstResponseSeconds: 80, // (30 + 90 + 120) / 3
          avgResolutionSeconds: 543599.333, // (518 399 + 82 799 + 1 029 600) / 3, not the mean of the daily means
        },
      });
    });

    it('counts by ISO week, Monday to Sunday', async () => {
      const response = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'week' }).expect(200);
      expect(response.body.granularity).toBe('week');
      expect(response.body.series).toEqual([
        {
          period: '2025-03-24',
          ...EMPTY,
          conversationsCreated: 2,
          conversationsClosed: 2,
          messagesReceived: 3,
          messagesSent: 3,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 60,
          avgResolutionSeconds: 300599,
        },
        {
          period: '2025-03-31',
          ...EMPTY,
          conversationsCreated: 2,
          conversationsClosed: 1,
          messagesReceived: 2,
          messagesSent: 1,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 120,
          avgResolutionSeconds: 1029600,
        },
      ]);
      expect(response.body.totals).toMatchObject({ conversationsCreated: 4, conversationsClosed: 3, avgFirstResponseSeconds: 80 });
    });

    it('counts by month, the last local minute of March in March', async () => {
      const response = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'month' }).expect(200);
      expect(response.body.series).toEqual([
        {
          period: '2025-03-01',
          ...EMPTY,
          conversationsCreated: 3,
          conversationsClosed: 2,
          messagesReceived: 4,
          messagesSent: 3,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 60, // c1 and c2; c3 was first answered in April
          avgResolutionSeconds: 300599,
        },
        {
          period: '2025-04-01',
          ...EMPTY,
          conversationsCreated: 1,
          conversationsClosed: 1,
          messagesReceived: 1,
          messagesSent: 1,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 120,
          avgResolutionSeconds: 1029600,
        },
      ]);
    });

    it('clips partial first and last weeks to the range, keeping their Monday as the period', async () => {
      const response = await metrics(acme, { startDate: '2025-03-26', endDate: '2025-04-02', granularity: 'week' }).expect(200);
      expect(response.body.series).toEqual([
        {
          period: '2025-03-24',
          ...EMPTY,
          conversationsCreated: 1, // c2; c1 began on the 24th, before the range
          conversationsClosed: 2,
          messagesReceived: 2,
          messagesSent: 2,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 90,
          avgResolutionSeconds: 300599,
        },
        {
          period: '2025-03-31',
          ...EMPTY,
          conversationsCreated: 1,
          conversationsClosed: 1,
          messagesReceived: 1,
          messagesSent: 1,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 120,
          avgResolutionSeconds: 1029600,
        },
      ]);
    });

    it('reads the days in the time zone of the settings: the same data by UTC days', async () => {
      await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'UTC' }).expect(200);
      try {
        const response = await metrics(acme, { startDate: '2025-03-24', endDate: '2025-04-06' }).expect(200);
        expect(response.body.timezone).toBe('UTC');
        const period = (date: string) => response.body.series.find((bucket: { period: string }) => bucket.period === date);
        // c1 began (and was first answered) on 23 March UTC, outside; c5 closed and c6 began on 6 April UTC, inside.
        expect(period('2025-03-24')).toEqual({ period: '2025-03-24', ...EMPTY });
        expect(period('2025-03-29')).toEqual({
          period: '2025-03-29',
          ...EMPTY,
          conversationsCreated: 1,
          conversationsClosed: 1,
          messagesReceived: 2,
          messagesSent: 1,
          avgFirstResponseSeconds: 90,
          avgResolutionSeconds: 518399,
        });
        expect(period('2025-04-06')).toEqual({
          period: '2025-04-06',
          ...EMPTY,
          conversationsCreated: 2,
          conversationsClosed: 1,
          messagesReceived: 2,
          messagesSent: 1,
          flowsExecuted: 1,
          avgFirstResponseSeconds: 10,
          avgResolutionSeconds: 3600,
        });
        expect(response.body.totals).toEqual({
          ...EMPTY,
          conversationsCreated: 4,
          conversationsClosed: 4,
          messagesReceived: 5,
          messagesSent: 4,
          flowsExecuted: 3,
          avgFirstResponseSeconds: 73.333,
          avgResolutionSeconds: 408599.5, // (518 399 + 82 799 + 1 029 600 + 3 600) / 4
        });
      } finally {
        await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Europe/Paris' }).expect(200);
      }
    });
  });

  it('lists every bucket of a range without data, with zero counts and null averages', async () => {
    const response = await metrics(acme, { startDate: '2024-12-30', endDate: '2025-01-01' }).expect(200);
    expect(response.body.series).toEqual([
      { period: '2024-12-30', ...EMPTY },
      { period: '2024-12-31', ...EMPTY },
      { period: '2025-01-01', ...EMPTY },
    ]);
    expect(response.body.totals).toEqual(EMPTY);
    const months = await metrics(acme, { startDate: '2024-11-15', endDate: '2025-02-15', granularity: 'month' }).expect(200);
    expect(months.body.series.map((bucket: { period: string }) => bucket.period)).toEqual([
      '2024-11-01',
      '2024-12-01',
      '2025-01-01',
      '2025-02-01',
    ]);
  });

  it("counts only the caller's company", async () => {
    const response = await metrics(globex, { startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'month' }).expect(200);
    expect(response.body.timezone).toBe('UTC');
    expect(response.body.series).toEqual([
      {
        period: '2025-03-01',
        ...EMPTY,
        conversationsCreated: 2,
        conversationsClosed: 1,
        messagesReceived: 2,
        messagesSent: 1,
        flowsExecuted: 1,
        avgFirstResponseSeconds: 5,
        avgResolutionSeconds: 86400,
      },
      { period: '2025-04-01', ...EMPTY },
    ]);
  });

  it('is open to every agent of the company, and to no one without a token', async () => {
    const agent = await addAgent(t, acme, 'agent');
    const response = await t.http
      .get('/v1/analytics/metrics')
      .query({ startDate: '2025-03-24', endDate: '2025-04-06', granularity: 'month' })
      .set(agent.auth)
      .expect(200);
    expect(response.body.totals.conversationsCreated).toBe(4);
    const anonymous = await t.http.get('/v1/analytics/metrics').query({ startDate: '2025-03-24', endDate: '2025-04-06' }).expect(401);
    expect(anonymous.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('accepts the longest range, 366 days, with a bucket per day', async () => {
    const response = await metrics(acme, { startDate: '2024-01-01', endDate: '2024-12-31' }).expect(200);
    expect(response.body.series).toHaveLength(366);
    expect(response.body.series[59]).toEqual({ period: '2024-02-29', ...EMPTY });
  });

  describe('validation', () => {
    async function problems(query: Record<string, string | string[]>) {
      const response = await metrics(acme, query as Record<string, string>).expect(400);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.body).toMatchObject({ status: 400, statusCode: 400, error: 'Bad Request', requestId: expect.any(String) });
      return response.body.errors as { field: string; message: string }[];
    }

    it('requires both dates', async () => {
      expect(await problems({})).toEqual([
        { field: 'startDate', message: 'startDate is required, as YYYY-MM-DD' },
        { field: 'endDate', message: 'endDate is required, as YYYY-MM-DD' },
      ]);
      expect(await problems({ startDate: '2025-01-01', endDate: '' })).toEqual([
        { field: 'endDate', message: 'endDate is required, as YYYY-MM-DD' },
      ]);
    });

    it.each(['2025-3-01', '01/03/2025', '2025-03-01T00:00:00Z', '20250301', 'yesterday', '1741824000000'])(
      'refuses startDate=%s as not YYYY-MM-DD',
      async (startDate) => {
        expect(await problems({ startDate, endDate: '2025-03-31' })).toEqual([
          { field: 'startDate', message: 'startDate must be a date written YYYY-MM-DD' },
        ]);
      },
    );

    it.each(['2025-02-29', '2025-02-30', '2025-04-31', '2025-13-01', '2025-00-10'])('refuses %s, not a real date', async (endDate) => {
      expect(await problems({ startDate: '2025-01-01', endDate })).toEqual([
        { field: 'endDate', message: `endDate is not a real calendar date: ${endDate}` },
      ]);
    });

    it('refuses an end before the start', async () => {
      expect(await problems({ startDate: '2025-03-02', endDate: '2025-03-01' })).toEqual([
        { field: 'endDate', message: 'endDate must not be before startDate' },
      ]);
    });

    it('refuses a range over 366 days', async () => {
      expect(await problems({ startDate: '2023-01-01', endDate: '2024-01-02' })).toEqual([
        { field: 'endDate', message: 'the range from startDate to endDate must be at most 366 days (got 367)' },
      ]);
    });

    it('refuses an unknown granularity', async () => {
      for (const granularity of ['year', 'DAY', '']) {
        expect(await problems({ startDate: '2025-01-01', endDate: '2025-01-31', granularity })).toEqual([
          { field: 'granularity', message: 'granularity must be one of the following values: day, week, month' },
        ]);
      }
    });

    it('refuses repeated dates, unknown parameters and operators', async () => {
      expect(await problems({ startDate: ['2025-01-01', '2025-01-02'], endDate: '2025-01-31' })).toEqual([
        { field: 'startDate', message: 'startDate must be a date written YYYY-MM-DD' },
      ]);
      expect(await problems({ startDate: '2025-01-01', endDate: '2025-01-31', timezone: 'UTC' })).toEqual([
        { field: 'timezone', message: 'timezone is not a parameter of this query' },
      ]);
      const operator = await t.http
        .get('/v1/analytics/metrics?startDate=2025-01-01&endDate=2025-01-31&$where=1')
        .set(acme.auth)
        .expect(400);
      expect(operator.body.message).toBe('Field names starting with "$" are not allowed (found "$where")');
      const nested = await t.http.get('/v1/analytics/metrics?startDate[$gt]=&endDate=2025-01-31').set(acme.auth).expect(400);
      expect(nested.body.errors).toContainEqual({ field: 'startDate', message: 'startDate is required, as YYYY-MM-DD' });
    });
  });
});
