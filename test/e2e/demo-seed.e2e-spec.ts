import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DemoSeedService, type DemoCredentials } from '../../src/seed/demo-seed.service.js';
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
    await t.http.get('/api/external/webhooks').set('x-api-key', demo.apiKey).expect(200);
  });

  it("has a key that reads the event feed too (events:read): the demo conversations' events", async () => {
    await settle(t);
    const events = await t.http.get('/api/external/events').set('x-api-key', demo.apiKey).expect(200);
    expect(events.body.data.filter((event: { type: string }) => event.type === 'CONVERSATION_CREATED')).toHaveLength(2);
  });
});
