import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Settings } from '../../src/settings/settings.schema.js';
import { SettingsRepository } from '../../src/settings/settings.repository.js';
import { registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** A company's settings are read from memory; every change to settings in the process applies at once. */
describe('settings, from memory', () => {
  let t: TestApp;
  let acme: TestCompany;

  beforeAll(async () => {
    t = await createTestApp();
    acme = await registerCompany(t.http, 'Acme');
  });
  afterAll(() => t.close());

  it('reads the settings once for many requests', async () => {
    const globex = await registerCompany(t.http, 'Globex');
    const reads = jest.spyOn(t.model(Settings.name), 'findOne');
    try {
      for (let i = 0; i < 5; i++) await t.http.get('/v1/settings').set(globex.auth).expect(200);
      expect(reads).toHaveBeenCalledTimes(1);
    } finally {
      reads.mockRestore();
    }
  });

  it('answers a PATCH on the very next GET, and in what reads them (analytics time zone)', async () => {
    await t.http.get('/v1/settings').set(acme.auth).expect(200);
    await t.http.patch('/v1/settings').set(acme.auth).send({ timezone: 'Asia/Tokyo' }).expect(200);
    expect((await t.http.get('/v1/settings').set(acme.auth).expect(200)).body.timezone).toBe('Asia/Tokyo');
    const metrics = await t.http
      .get('/v1/analytics/metrics')
      .query({ startDate: '2025-01-01', endDate: '2025-01-01' })
      .set(acme.auth)
      .expect(200);
    expect(metrics.body.timezone).toBe('Asia/Tokyo');
  });

  it('sees a write made through the model outside the API, as a script in this process would', async () => {
    await t.http.get('/v1/settings').set(acme.auth).expect(200);
    await t.model<Settings>(Settings.name).updateOne({ companyId: acme.companyId }, { $set: { welcomeMessage: 'Hi there' } });
    expect((await t.http.get('/v1/settings').set(acme.auth).expect(200)).body.welcomeMessage).toBe('Hi there');
  });

  it('recreates the defaults of a company whose settings were removed', async () => {
    await t.http.get('/v1/settings').set(acme.auth).expect(200);
    await t.model<Settings>(Settings.name).deleteOne({ companyId: acme.companyId });
    const answer = await t.http.get('/v1/settings').set(acme.auth).expect(200);
    expect(answer.body).toMatchObject({ timezone: 'UTC', language: 'en' });
    expect(await t.app.get(SettingsRepository).count(acme.companyId)).toBe(1);
  });
});
