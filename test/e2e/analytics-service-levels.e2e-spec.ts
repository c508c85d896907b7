import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { Conversation } from '../../src/conversations/conversation.schema.js';
import { Message } from '../../src/messages/message.schema.js';
import { EMPTY_FIGURES as EMPTY } from '../support/analytics.js';
import { settle } from '../support/event-log.js';
import { addAgent, type TestAgentLogin } from '../support/factories.js';
import { companyWithKey, inbound, type ServiceLevelsCompany } from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** One conversation of the fixture: whose it is, and its instants (New York, UTC-5 in January). */
interface Spec {
  agent: 'ada' | 'grace' | null;
  createdAt: string;
  assignedAt?: string;
  firstResponseAt?: string;
  closedAt?: string;
  breaches?: string[] | null;
  rating?: [number, string];
  agentMessages?: string[];
}

const FIXTURE: Spec[] = [
  // 5 January: Ada answers in 60 s, closes in an hour, met its SLA, rated 5 on the 6th.
  { agent: 'ada', createdAt: '2031-01-05T15:00:00Z', assignedAt: '2031-01-05T15:00:10Z', firstResponseAt: '2031-01-05T15:01:00Z', closedAt: '2031-01-05T16:00:00Z', breaches: [], rating: [5, '2031-01-06T15:00:00Z'], agentMessages: ['2031-01-05T15:01:00Z', '2031-01-05T15:30:00Z'] },
  // 5 January: Ada answers in 180 s, closes in two hours, missed a target, rated 2.
  { agent: 'ada', createdAt: '2031-01-05T17:00:00Z', assignedAt: '2031-01-05T17:00:00Z', firstResponseAt: '2031-01-05T17:03:00Z', closedAt: '2031-01-05T19:00:00Z', breaches: ['first_response'], rating: [2, '2031-01-05T20:00:00Z'], agentMessages: ['2031-01-05T17:03:00Z'] },
  // 6 January: Grace closes one without an SLA policy; it counts in neither SLA figure.
  { agent: 'grace', createdAt: '2031-01-06T14:00:00Z', assignedAt: '2031-01-06T14:00:00Z', closedAt: '2031-01-06T14:30:00Z', breaches: null },
  // 6 January: Grace's open one, assigned and answered.
  { agent: 'grace', createdAt: '2031-01-06T15:00:00Z', assignedAt: '2031-01-06T15:05:00Z', firstResponseAt: '2031-01-06T15:10:00Z', agentMessages: ['2031-01-06T15:10:00Z'] },
  // 6 January at 23:30 in New York (7 January UTC): closed under a policy that was met; in the range.
  { agent: null, createdAt: '2031-01-07T04:00:00Z', closedAt: '2031-01-07T04:30:00Z', breaches: [] },
  // 7 January in New York: outside the range.
  { agent: 'ada', createdAt: '2031-01-07T15:00:00Z', assignedAt: '2031-01-07T15:00:00Z', firstResponseAt: '2031-01-07T15:00:30Z', closedAt: '2031-01-07T16:00:00Z', breaches: ['resolution'], rating: [1, '2031-01-07T17:00:00Z'], agentMessages: ['2031-01-07T15:00:30Z'] },
];

/** SLA and satisfaction figures in the metrics, and the agents report (contract section 16). */
describe('service-level analytics', () => {
  let t: TestApp;
  let acme: ServiceLevelsCompany;
  let globex: ServiceLevelsCompany;
  let ada: TestAgentLogin;
  let grace: TestAgentLogin;
  let idle: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp({ env: { THROTTLE_LIMIT: '100000' } });
    acme = await companyWithKey(t, 'Acme');
    globex = await companyWithKey(t, 'Globex');
    ada = await addAgent(t, acme, 'agent');
    grace = await addAgent(t, acme, 'agent');
    idle = await addAgent(t, acme, 'supervisor');
    await t.http.patch(`/v1/agents/${ada.agentId}`).set(acme.auth).send({ name: 'Ada' }).expect(200);
    await t.http.patch(`/v1/agents/${grace.agentId}`).set(acme.auth).send({ name: 'Grace' }).expect(200);
    await t.http.patch(`/v1/agents/${idle.agentId}`).set(acme.auth).send({ name: 'Idle' }).expect(200);
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'America/New_York' }).expect(200);
    const moves = [];
    for (const spec of FIXTURE) moves.push(await build(acme, spec));
    // Another company's activity on the same days: never counted for Acme.
    moves.push(await build(globex, { agent: null, createdAt: '2031-01-05T15:00:00Z', closedAt: '2031-01-05T16:00:00Z', breaches: ['first_response'], rating: [1, '2031-01-05T17:00:00Z'] }));
    // Once the consumers are done with what the API wrote, nothing writes these records again.
    await settle(t);
    for (const move of moves) await move();
  }, 120_000);
  afterAll(() => t.close());

  const raw = (model: string) => t.model(model).collection;

  /** A conversation through the API (with the agents' messages), and what moves it to the fixture's instants and outcomes. */
  async function build(company: ServiceLevelsCompany, spec: Spec): Promise<() => Promise<void>> {
    const { conversation } = await inbound(t, company, 'Hello');
    const agent = spec.agent === 'ada' ? ada : spec.agent === 'grace' ? grace : null;
    const messageIds: string[] = [];
    for (const _ of spec.agentMessages ?? []) {
      messageIds.push((await t.http.post(`/v1/conversations/${conversation.id}/messages`).set(agent!.auth).send({ text: 'On it' }).expect(201)).body.id);
    }
    if (agent) await t.http.post(`/v1/conversations/${conversation.id}/assign`).set(company.auth).send({ agentId: agent.agentId }).expect(200);
    if (spec.closedAt) await t.http.post(`/v1/conversations/${conversation.id}/close`).set(company.auth).send({}).expect(200);
    return async () => {
      for (const [index, id] of messageIds.entries()) {
        await raw(Message.name).updateOne({ _id: new Types.ObjectId(id) }, { $set: { createdAt: new Date(spec.agentMessages![index]) } });
      }
      const at = (value: string | undefined) => (value ? new Date(value) : null);
      const sla = spec.breaches === undefined || spec.breaches === null ? null : { policyId: new Types.ObjectId(), breaches: spec.breaches, clocks: {} };
      const csat = spec.rating ? { requestedAt: at(spec.closedAt), expiresAt: at(spec.closedAt), rating: spec.rating[0], comment: null, submittedAt: new Date(spec.rating[1]) } : null;
      await raw(Conversation.name).updateOne(
        { _id: new Types.ObjectId(conversation.id) },
        { $set: { createdAt: at(spec.createdAt), assignedAt: at(spec.assignedAt), firstResponseAt: at(spec.firstResponseAt), closedAt: at(spec.closedAt), sla, csat } },
      );
    };
  }

  it('metrics count SLA outcomes where conversations closed, ratings where they were given', async () => {
    const response = await t.http.get('/v1/analytics/metrics').query({ startDate: '2031-01-05', endDate: '2031-01-06' }).set(acme.auth).expect(200);
    const [fifth, sixth] = response.body.series;
    expect(fifth).toMatchObject({ period: '2031-01-05', conversationsClosed: 2, slaMet: 1, slaBreaches: 1, csatResponses: 1, csatAverage: 2 });
    expect(sixth).toMatchObject({ period: '2031-01-06', conversationsClosed: 2, slaMet: 1, slaBreaches: 0, csatResponses: 1, csatAverage: 5 });
    expect(response.body.totals).toMatchObject({ slaMet: 2, slaBreaches: 1, csatResponses: 2, csatAverage: 3.5 });

    const empty = await t.http.get('/v1/analytics/metrics').query({ startDate: '2031-02-01', endDate: '2031-02-01' }).set(acme.auth).expect(200);
    expect(empty.body.totals).toEqual(EMPTY);
  });

  it('the agents report: per agent over the local days, every active agent listed', async () => {
    const response = await t.http.get('/v1/analytics/agents').query({ startDate: '2031-01-05', endDate: '2031-01-06' }).set(grace.auth).expect(200);
    const admin = response.body.data.find((row: { agentId: string }) => row.agentId === acme.agentId);
    expect(response.body).toEqual({
      startDate: '2031-01-05',
      endDate: '2031-01-06',
      timezone: 'America/New_York',
      data: [
        expect.objectContaining({ name: 'Acme Admin' }),
        {
          agentId: ada.agentId,
          name: 'Ada',
          assigned: 2,
          closed: 2,
          messagesSent: 3,
          avgFirstResponseSeconds: 120,
          avgResolutionSeconds: 5400,
          slaBreaches: 1,
          csatAverage: 3.5,
        },
        {
          agentId: grace.agentId,
          name: 'Grace',
          assigned: 2,
          closed: 1,
          messagesSent: 1,
          avgFirstResponseSeconds: 600,
          avgResolutionSeconds: 1800,
          slaBreaches: 0,
          csatAverage: null,
        },
        { agentId: idle.agentId, name: 'Idle', assigned: 0, closed: 0, messagesSent: 0, avgFirstResponseSeconds: null, avgResolutionSeconds: null, slaBreaches: 0, csatAverage: null },
      ],
    });
    expect(admin).toMatchObject({ assigned: 0, closed: 0, messagesSent: 0 });

    const globexReport = await t.http.get('/v1/analytics/agents').query({ startDate: '2031-01-05', endDate: '2031-01-06' }).set(globex.auth).expect(200);
    expect(globexReport.body.data).toEqual([expect.objectContaining({ agentId: globex.agentId, closed: 0, slaBreaches: 0, csatAverage: null })]);
  });

  it('refuses a bad range with 400 naming the parameter', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ endDate: '2031-01-06' }, 'startDate'],
      [{ startDate: '2031-01-06' }, 'endDate'],
      [{ startDate: '2031-02-30', endDate: '2031-03-01' }, 'startDate'],
      [{ startDate: '2031-01-06', endDate: '2031-01-05' }, 'endDate'],
      [{ startDate: '2030-01-01', endDate: '2031-01-05' }, 'endDate'],
      [{ startDate: '2031-01-05', endDate: '2031-01-06', granularity: 'day' }, 'granularity'],
    ];
    for (const [query, field] of cases) {
      const response = await t.http.get('/v1/analytics/agents').query(query).set(acme.auth).expect(400);
      expect(response.body.errors.map((problem: { field: string }) => problem.field)).toContain(field);
    }
    await t.http.get('/v1/analytics/agents').query({ startDate: '2031-01-05', endDate: '2031-01-06' }).expect(401);
  });
});
