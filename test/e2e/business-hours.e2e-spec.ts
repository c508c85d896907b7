import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Settings } from '../../src/settings/settings.schema.js';
import { settle } from '../support/event-log.js';
import { addAgent, type TestAgentLogin } from '../support/factories.js';
import {
  advanceTo,
  companyWithKey,
  conversationOf,
  createPolicy,
  inbound,
  loggedOf,
  quietly,
  settled,
  slaEvent,
  waitForLogged,
  type ServiceLevelsCompany,
} from '../support/service-levels.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { TestClock } from '../support/test-clock.js';
import { waitFor } from '../support/wait-for.js';

interface Problem {
  field: string;
  message: string;
}

const weekdays = (open: string, close: string) => ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'].map((day) => ({ day, open, close }));
// Paris office hours with a lunch break (split shifts); winter time is UTC+1.
const PARIS_OFFICE = {
  timezone: 'Europe/Paris',
  businessHours: { enabled: true, schedule: [...weekdays('09:00', '12:00'), ...weekdays('13:00', '17:00')], holidays: ['2031-01-13'] },
};

/** Business hours (contract section 16): the status route, and SLA policies that count only open hours. */
describe('business hours', () => {
  const clock = new TestClock();
  let t: TestApp;
  let acme: ServiceLevelsCompany;
  let globex: ServiceLevelsCompany;
  let agent: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp({ clock, env: { THROTTLE_LIMIT: '100000' } });
    acme = await companyWithKey(t, 'Acme');
    globex = await companyWithKey(t, 'Globex');
    agent = await addAgent(t, acme, 'agent');
    await t.http.patch('/v1/settings').set(acme.auth).send(PARIS_OFFICE).expect(200);
  });
  afterAll(() => t.close());

  const status = (company: { auth: Record<string, string> }) => t.http.get('/v1/settings/business-hours/status').set(company.auth).expect(200);
  const fieldsOf = (body: { errors?: Problem[] }) => (body.errors ?? []).map((problem) => problem.field);

  it('answers open or closed now, and the next change, to any agent', async () => {
    // Friday 10 January 2031, 11:30 in Paris: open until the lunch break.
    advanceTo(clock, '2031-01-10T10:30:00Z');
    expect((await status(agent)).body).toEqual({
      enabled: true,
      open: true,
      nextChangeAt: '2031-01-10T11:00:00.000Z',
      timezone: 'Europe/Paris',
      at: expect.any(String),
    });
    advanceTo(clock, '2031-01-10T11:15:00Z');
    expect((await status(agent)).body).toMatchObject({ open: false, nextChangeAt: '2031-01-10T12:00:00.000Z' });
    // Friday evening: closed over the weekend and the holiday on Monday 13th, until Tuesday 09:00.
    advanceTo(clock, '2031-01-10T16:30:00Z');
    expect((await status(agent)).body).toMatchObject({ open: false, nextChangeAt: '2031-01-14T08:00:00.000Z' });
    // Business hours off (the default): always open.
    expect((await status(globex)).body).toMatchObject({ enabled: false, open: true, nextChangeAt: null, timezone: 'UTC' });
    await t.http.get('/v1/settings/business-hours/status').expect(401);
  });

  it('validates windows, holidays and the new settings, naming the field; stores nothing refused', async () => {
    const cases: [Record<string, unknown>, string, RegExp?][] = [
      [{ businessHours: { holidays: ['2031-02-30'] } }, 'businessHours.holidays', /holidays\[0\] must be a real calendar date/],
      [{ businessHours: { holidays: ['2031-01-01', '1/2/2031'] } }, 'businessHours.holidays', /holidays\[1\]/],
      [{ businessHours: { holidays: '2031-01-01' } }, 'businessHours.holidays'],
      [{ businessHours: { schedule: [{ day: 'friday', open: '22:00', close: '02:00' }] } }, 'businessHours.schedule.0.close', /cannot cross midnight/],
      [{ businessHours: { schedule: [{ day: 'friday', open: '09:00', close: '13:00' }, { day: 'friday', open: '12:00', close: '18:00' }] } }, 'businessHours.schedule', /overlap/],
      [{ outOfHoursMessage: 'x'.repeat(1001) }, 'outOfHoursMessage'],
      [{ outOfHoursMessage: null }, 'outOfHoursMessage'],
      [{ csat: { enabled: 'yes' } }, 'csat.enabled'],
      [{ csat: { message: '' } }, 'csat.message'],
      [{ csat: { stars: 5 } }, 'csat.stars'],
    ];
    const settings = () => t.model<Settings>(Settings.name).findOne({ companyId: globex.companyId }).lean();
    const before = await settings();
    for (const [body, field, message] of cases) {
      const response = await t.http.patch('/v1/settings').set(globex.auth).send(body).expect(400);
      expect(fieldsOf(response.body)).toContain(field);
      if (message) expect(response.body.errors.find((problem: Problem) => problem.field === field).message).toMatch(message);
    }
    const stored = await settings();
    expect(stored?.businessHours.holidays).toEqual([]);
    expect(stored).toEqual(before);

    const night = await t.http
      .patch('/v1/settings')
      .set(globex.auth)
      .send({
        businessHours: {
          schedule: [{ day: 'friday', open: '22:00', close: '24:00' }, { day: 'saturday', open: '00:00', close: '02:00' }],
          holidays: ['2031-12-25', '2031-01-01', '2031-12-25'],
        },
        outOfHoursMessage: 'We are closed.',
        csat: { enabled: true },
      })
      .expect(200);
    expect(night.body).toMatchObject({
      businessHours: { holidays: ['2031-01-01', '2031-12-25'], schedule: [{ close: '24:00' }, { open: '00:00' }] },
      outOfHoursMessage: 'We are closed.',
      csat: { enabled: true, message: 'How would you rate our help, from 1 to 5?' },
    });
    await t.http.patch('/v1/settings').set(globex.auth).send({ businessHours: { schedule: weekdays('09:00', '17:00'), holidays: [] }, outOfHoursMessage: '', csat: { enabled: false } }).expect(200);
  });

  it('a businessHoursOnly policy counts across a closed night and weekend; another counts every second', async () => {
    const night = await companyWithKey(t, 'Night');
    await t.http.patch('/v1/settings').set(night.auth).send(PARIS_OFFICE).expect(200);
    const hours = await createPolicy(t, night, { name: 'Office', conditions: { channels: ['email'] }, firstResponseSeconds: 600, warnBeforeSeconds: 300, businessHoursOnly: true });
    const clockwise = await createPolicy(t, night, { name: 'Around the clock', firstResponseSeconds: 600 });
    // Friday 17 January 2031, 16:55 in Paris: five open minutes left.
    advanceTo(clock, '2031-01-17T15:55:00Z');
    const byEmail = (await inbound(t, night, 'Evening e-mail', { email: 'late@example.com' }, 'email')).conversation;
    const bySms = (await inbound(t, night, 'Evening text', { phone: '+33612345678' }, 'sms')).conversation;
    // Five minutes on Friday (less the moments the test took), the rest from Monday 09:00: Monday 09:05 in Paris.
    const fridayLeft = Date.parse('2031-01-17T16:00:00Z') - Date.parse(byEmail.createdAt);
    const mondayDue = new Date(Date.parse('2031-01-20T08:00:00Z') + 600_000 - fridayLeft).toISOString();
    expect((await settled(t, night, byEmail.id)).sla).toMatchObject({ policyId: hours.id, firstResponseDueAt: mondayDue });
    const plainDue = new Date(new Date(bySms.createdAt).getTime() + 600_000).toISOString();
    expect((await conversationOf(t, night, bySms.id)).sla).toMatchObject({ policyId: clockwise.id, firstResponseDueAt: plainDue });

    advanceTo(clock, plainDue);
    const [plainBreach] = await waitForLogged(t, night, 'sla.breached', 1);
    expect(plainBreach.data).toEqual(slaEvent('first_response', plainDue, clockwise.id, bySms.id));

    // All night and all weekend: nothing more.
    advanceTo(clock, '2031-01-20T07:54:00Z');
    await quietly();
    expect(await loggedOf(t, night, 'sla.warning', 'sla.breached')).toHaveLength(1);

    // Monday 09:00 (five minutes before the due time, wall clock): the warning; 09:05: the breach.
    advanceTo(clock, '2031-01-20T08:00:00Z');
    const [warning] = await waitForLogged(t, night, 'sla.warning', 1);
    expect(warning.data).toEqual(slaEvent('first_response', mondayDue, hours.id, byEmail.id));
    advanceTo(clock, mondayDue);
    const breaches = await waitForLogged(t, night, 'sla.breached', 2);
    expect(breaches[1].data).toEqual(slaEvent('first_response', mondayDue, hours.id, byEmail.id));
    await quietly();
    expect(await loggedOf(t, night, 'sla.warning', 'sla.breached')).toHaveLength(3);
  });

  it('a change of business hours moves the deadlines that count them, and their timers', async () => {
    const moving = await companyWithKey(t, 'Moving');
    await t.http.patch('/v1/settings').set(moving.auth).send(PARIS_OFFICE).expect(200);
    const policy = await createPolicy(t, moving, { name: 'Office', firstResponseSeconds: 3600, businessHoursOnly: true });
    // Friday 24 January 2031, 17:30 in Paris: closed until Monday.
    advanceTo(clock, '2031-01-24T16:30:00Z');
    const { conversation } = await inbound(t, moving, 'Weekend question');
    expect((await settled(t, moving, conversation.id)).sla).toMatchObject({ policyId: policy.id, firstResponseDueAt: '2031-01-27T09:00:00.000Z' });

    // Open on Saturday morning from now on: the hour counts from Saturday 10:00.
    const saturday = { day: 'saturday', open: '10:00', close: '12:00' };
    await t.http.patch('/v1/settings').set(moving.auth).send({ businessHours: { schedule: [...PARIS_OFFICE.businessHours.schedule, saturday] } }).expect(200);
    await waitFor(async () => (await conversationOf(t, moving, conversation.id)).sla?.firstResponseDueAt === '2031-01-25T10:00:00.000Z', {
      message: 'the deadline to move to Saturday 11:00',
    });
    advanceTo(clock, '2031-01-25T10:00:00Z');
    const [breach] = await waitForLogged(t, moving, 'sla.breached', 1);
    expect(breach.data).toEqual(slaEvent('first_response', '2031-01-25T10:00:00.000Z', policy.id, conversation.id));

    // A time zone change moves them too (an open conversation whose deadline is still to come).
    const later = (await inbound(t, moving, 'Another one')).conversation;
    await settle(t);
    const before = (await conversationOf(t, moving, later.id)).sla?.firstResponseDueAt;
    await t.http.patch('/v1/settings').set(moving.auth).send({ timezone: 'America/New_York' }).expect(200);
    await waitFor(async () => (await conversationOf(t, moving, later.id)).sla?.firstResponseDueAt !== before, { message: 'the deadline to move with the time zone' });
    // Saturday 25 January, 10:00 to 11:00 in New York (UTC-5), where it is 05:00 now.
    expect((await conversationOf(t, moving, later.id)).sla?.firstResponseDueAt).toBe('2031-01-25T16:00:00.000Z');
  });
});
