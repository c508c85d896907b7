import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Company } from '../../src/companies/company.schema.js';
import { DEMO_ADMIN_EMAIL, DemoSeedService, type DemoCredentials } from '../../src/seed/demo-seed.service.js';
import { settle } from '../support/event-log.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

describe('the demo company (embedded engine, DEMO_SEED)', () => {
  let t: TestApp;
  let demo: DemoCredentials;
  let startedAt: number;

  beforeAll(async () => {
    t = await createTestApp({ env: { DEMO_SEED: 'true', JWT_EXPIRES_IN: '1h' } });
    startedAt = Date.now();
    demo = (await t.app.get(DemoSeedService).seed())!;
  });
  afterAll(() => t.close());

  it('says when its token expires: JWT_EXPIRES_IN after the start', () => {
    const expiresIn = demo.accessTokenExpiresAt.getTime() - startedAt;
    expect(expiresIn).toBeGreaterThan(3_595_000);
    expect(expiresIn).toBeLessThanOrEqual(3_600_000 + 5_000);
  });

  it('has two customers with an open conversation each, readable with the token and the API key', async () => {
    const auth = { Authorization: `Bearer ${demo.accessToken}` };
    const conversations = await t.http.get('/v1/conversations').set(auth).expect(200);
    expect(conversations.body.data.map((c: { contact: { name: string } }) => c.contact.name).sort()).toEqual([
      'Alan Turing',
      'Grace Hopper',
    ]);
    expect(conversations.body.data.map((c: { status: string }) => c.status)).toEqual(['bot', 'bot']);
    const contacts = await t.http.get('/v1/contacts').set(auth).expect(200);
    expect(contacts.body.data).toHaveLength(2);
    await t.http.get('/api/external/webhooks').set('x-api-key', demo.apiKey!).expect(200);
  });

  it("has a key that reads the event feed too (events:read): the demo conversations' events", async () => {
    await settle(t);
    const events = await t.http.get('/api/external/events').set('x-api-key', demo.apiKey!).expect(200);
    expect(events.body.data.filter((event: { type: string }) => event.type === 'CONVERSATION_CREATED')).toHaveLength(2);
  });
});

describe('demo seed on a kept data directory (EMBEDDED_DATA_DIR)', () => {
  let dir: string;
  const apps: TestApp[] = [];

  const start = async () => {
    const app = await createTestApp({ env: { DEMO_SEED: 'true', EMBEDDED_DATA_DIR: dir } });
    apps.push(app);
    return app;
  };

  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the demo company once; a later start on the same directory keeps it and mints a fresh token for its admin', async () => {
    dir = mkdtempSync(join(tmpdir(), 'parley-seed-'));
    const first = await start();
    const created = await first.app.get(DemoSeedService).seed();
    expect(created).toMatchObject({ existing: false, email: DEMO_ADMIN_EMAIL, dataDir: dir, password: expect.any(String), apiKey: expect.any(String) });
    await first.close();
    apps.splice(0);

    const second = await start();
    const again = await second.app.get(DemoSeedService).seed();
    expect(again).toMatchObject({ existing: true, email: DEMO_ADMIN_EMAIL, dataDir: dir, password: null, apiKey: null, accessToken: expect.any(String) });
    expect(await second.model(Company.name).countDocuments({ name: 'Demo Company' })).toBe(1);
    await second.http.get('/v1/settings').set('authorization', `Bearer ${again!.accessToken}`).expect(200);
    // What the first start printed still works: the data, the key's hash and the password's hash were kept.
    await second.http.get('/api/external/webhooks').set('x-api-key', created!.apiKey!).expect(200);
    await second.http.post('/v1/auth/login').send({ email: DEMO_ADMIN_EMAIL, password: created!.password }).expect(200);
  });
});
