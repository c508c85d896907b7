import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Settings } from '../../src/settings/settings.schema.js';
import { addAgent, twoCompanies, type TestAgentLogin, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

interface Problem {
  field: string;
  message: string;
}

describe('/v1/settings', () => {
  let t: TestApp;
  let acme: TestCompany;
  let globex: TestCompany;
  let agent: TestAgentLogin;
  let supervisor: TestAgentLogin;

  beforeAll(async () => {
    t = await createTestApp();
    ({ acme, globex } = await twoCompanies(t.http));
    agent = await addAgent(t, acme, 'agent');
    supervisor = await addAgent(t, acme, 'supervisor');
  });
  afterAll(() => t.close());

  const fieldsOf = (body: { errors?: Problem[] }) => (body.errors ?? []).map((problem) => problem.field).sort();

  it('answers the defaults created with the company, to any role', async () => {
    const response = await t.http.get('/v1/settings').set(agent.auth).expect(200);
    expect(response.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      timezone: 'UTC',
      businessHours: {
        enabled: false,
        schedule: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'].map((day) => ({
          day,
          open: '09:00',
          close: '17:00',
        })),
        holidays: [],
      },
      // A new company sends nothing it did not choose.
      welcomeMessage: '',
      outOfHoursMessage: '',
      csat: { enabled: false, message: 'How would you rate our help, from 1 to 5?' },
      autoAssignment: { enabled: false, strategy: 'round_robin', maxConversationsPerAgent: 5, awayAfterIdleSeconds: null },
      language: 'en',
      replyWindowWarningMinutes: 60,
      retention: { closedConversationDays: null },
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
  });

  it('merges a patch field by field and stores it', async () => {
    const first = await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({ timezone: 'Europe/Paris', autoAssignment: { enabled: true } })
      .expect(200);
    expect(first.body).toMatchObject({
      timezone: 'Europe/Paris',
      autoAssignment: { enabled: true, strategy: 'round_robin', maxConversationsPerAgent: 5 },
      language: 'en',
    });

    const second = await t.http
      .patch('/v1/settings')
      .set(acme.auth)
      .send({
        autoAssignment: { strategy: 'least_busy', maxConversationsPerAgent: 12 },
        businessHours: { schedule: [{ day: 'saturday', open: '10:00', close: '14:00' }] },
        language: 'pt-br',
        welcomeMessage: 'Olá!',
      })
      .expect(200);
    expect(second.body).toMatchObject({
      timezone: 'Europe/Paris',
      autoAssignment: { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 12 },
      businessHours: { enabled: false, schedule: [{ day: 'saturday', open: '10:00', close: '14:00' }] },
      language: 'pt-BR',
      welcomeMessage: 'Olá!',
    });

    const stored = await t.model<Settings>(Settings.name).findOne({ companyId: acme.companyId }).lean();
    expect(stored).toMatchObject({
      timezone: 'Europe/Paris',
      language: 'pt-BR',
      autoAssignment: { enabled: true, strategy: 'least_busy', maxConversationsPerAgent: 12 },
    });
    expect(await t.model<Settings>(Settings.name).countDocuments({ companyId: acme.companyId })).toBe(1);
    const read = await t.http.get('/v1/settings').set(acme.auth).expect(200);
    expect(read.body).toEqual(second.body);
  });

  it('an empty patch changes nothing', async () => {
    const before = await t.http.get('/v1/settings').set(acme.auth).expect(200);
    const after = await t.http.patch('/v1/settings').set(acme.auth).send({}).expect(200);
    expect(after.body).toEqual(before.body);
  });

  it('accepts IANA zones with aliases and UTC, and refuses anything else', async () => {
    for (const timezone of ['UTC', 'Asia/Kolkata', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5']) {
      const response = await t.http.patch('/v1/settings').set(globex.auth).send({ timezone }).expect(200);
      expect(response.body.timezone).toBe(timezone);
    }
    for (const timezone of ['Mars/Olympus_Mons', 'europe/paris', '+01:00', 'GMT+1', '', 42, null]) {
      const response = await t.http.patch('/v1/settings').set(globex.auth).send({ timezone }).expect(400);
      expect(fieldsOf(response.body)).toContain('timezone');
    }
  });

  it('validates business hours: shape, times, order and overlaps', async () => {
    const cases: [unknown, string][] = [
      [{ schedule: [{ day: 'funday', open: '09:00', close: '17:00' }] }, 'businessHours.schedule.0.day'],
      [{ schedule: [{ day: 'monday', open: '9:00', close: '17:00' }] }, 'businessHours.schedule.0.open'],
      [{ schedule: [{ day: 'monday', open: '09:00', close: '24:01' }] }, 'businessHours.schedule.0.close'],
      [{ schedule: [{ day: 'monday', open: '24:00', close: '24:00' }] }, 'businessHours.schedule.0.open'],
      [{ schedule: [{ day: 'monday', open: '17:00', close: '09:00' }] }, 'businessHours.schedule.0.close'],
      [{ schedule: [{ day: 'monday', open: '09:00', close: '09:00' }] }, 'businessHours.schedule.0.close'],
      [{ schedule: [{ day: 'monday', open: '09:00' }] }, 'businessHours.schedule.0.close'],
      [{ schedule: [{ day: 'monday', open: '09:00', close: '17:00', note: 'x' }] }, 'businessHours.schedule.0.note'],
      [
        {
          schedule: [
            { day: 'monday', open: '09:00', close: '13:00' },
            { day: 'monday', open: '12:00', close: '17:00' },
          ],
        },
        'businessHours.schedule',
      ],
      [{ schedule: 'always' }, 'businessHours.schedule'],
      [{ enabled: 'yes' }, 'businessHours.enabled'],
      [{ always: true }, 'businessHours.always'],
    ];
    for (const [businessHours, field] of cases) {
      const response = await t.http.patch('/v1/settings').set(globex.auth).send({ businessHours }).expect(400);
      expect(fieldsOf(response.body)).toContain(field);
    }
    const split = await t.http
      .patch('/v1/settings')
      .set(globex.auth)
      .send({
        businessHours: {
          enabled: true,
          schedule: [
            { day: 'monday', open: '09:00', close: '12:00' },
            { day: 'monday', open: '13:00', close: '17:00' },
          ],
        },
      })
      .expect(200);
    expect(split.body.businessHours.schedule).toHaveLength(2);
  });

  it('validates auto-assignment, language and welcome message', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ autoAssignment: { strategy: 'random' } }, 'autoAssignment.strategy'],
      [{ autoAssignment: { maxConversationsPerAgent: 0 } }, 'autoAssignment.maxConversationsPerAgent'],
      [{ autoAssignment: { maxConversationsPerAgent: 1001 } }, 'autoAssignment.maxConversationsPerAgent'],
      [{ autoAssignment: { maxConversationsPerAgent: 2.5 } }, 'autoAssignment.maxConversationsPerAgent'],
      [{ autoAssignment: { enabled: 'true' } }, 'autoAssignment.enabled'],
      [{ autoAssignment: { enabled: null } }, 'autoAssignment.enabled'],
      [{ autoAssignment: true }, 'autoAssignment'],
      [{ language: 'english' }, 'language'],
      [{ language: 'e' }, 'language'],
      [{ language: 'en_US' }, 'language'],
      [{ welcomeMessage: 'x'.repeat(1001) }, 'welcomeMessage'],
      [{ welcomeMessage: null }, 'welcomeMessage'],
      [{ theme: 'dark' }, 'theme'],
    ];
    for (const [body, field] of cases) {
      const response = await t.http.patch('/v1/settings').set(globex.auth).send(body).expect(400);
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(fieldsOf(response.body)).toContain(field);
    }
    const refused = await t.http
      .patch('/v1/settings')
      .set(globex.auth)
      .send({ autoAssignment: { strategy: { $ne: 'x' } } })
      .expect(400);
    expect(refused.body.message).toMatch(/\$ne/);
    const stored = await t.model<Settings>(Settings.name).findOne({ companyId: globex.companyId }).lean();
    expect(stored?.autoAssignment).toEqual({ enabled: false, strategy: 'round_robin', maxConversationsPerAgent: 5 });
  });

  it('only admins change settings', async () => {
    for (const who of [agent, supervisor]) {
      await t.http.patch('/v1/settings').set(who.auth).send({ timezone: 'Asia/Tokyo' }).expect(403);
    }
    const stored = await t.model<Settings>(Settings.name).findOne({ companyId: acme.companyId }).lean();
    expect(stored?.timezone).toBe('Europe/Paris');
    await t.http.get('/v1/settings').expect(401);
    await t.http.patch('/v1/settings').send({ timezone: 'Asia/Tokyo' }).expect(401);
  });

  it('keeps companies apart', async () => {
    await t.http.patch('/v1/settings').set(acme.auth).send({ welcomeMessage: 'Acme only' }).expect(200);
    const globexSettings = await t.http.get('/v1/settings').set(globex.auth).expect(200);
    expect(globexSettings.body.welcomeMessage).not.toBe('Acme only');
  });
});
