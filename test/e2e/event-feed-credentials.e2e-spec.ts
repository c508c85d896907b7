import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import jwt from 'jsonwebtoken';
import { ApiKey } from '../../src/api-keys/api-key.schema.js';
import { publishEvents } from '../support/event-feed.js';
import { addAgent, registerCompany, type TestCompany } from '../support/factories.js';
import { listen, SseClients, type SseClient } from '../support/sse-client.js';
import { createTestApp, TEST_JWT_SECRET, type TestApp } from '../support/test-app.js';

/** The shortest check interval, so that each case takes a fraction of a second instead of up to 5 s. */
const CHECK_MS = 250;

describe('open event streams follow their credential (contract section 18)', () => {
  let t: TestApp;
  let base: string;
  const clients = new SseClients();

  beforeAll(async () => {
    t = await createTestApp({ env: { EVENT_STREAM_AUTH_CHECK_MS: String(CHECK_MS), THROTTLE_LIMIT: '100000' } });
    base = await listen(t.app);
  });
  afterEach(() => clients.closeAll());
  afterAll(() => t.close());

  const agentStream = (auth: { Authorization: string }) => clients.open(`${base}/v1/events/stream`, auth);
  const keyStream = (key: string) => clients.open(`${base}/api/external/events/stream`, { 'x-api-key': key });

  async function createKey(company: TestCompany, scopes: string[], auth = company.auth, expiresAt?: string) {
    const created = await t.http.post('/v1/api-keys').set(auth).send({ name: 'reader', scopes, expiresAt }).expect(201);
    return { id: created.body.id as string, key: created.body.key as string };
  }

  /** Resolves how the stream ended, or 'open' when it is still open after `withinMs`. */
  const endOf = (client: SseClient, withinMs = 10 * CHECK_MS) =>
    Promise.race([client.ended, new Promise<'open'>((resolve) => setTimeout(() => resolve('open'), withinMs))]);

  /** The stream ended cleanly, after a last comment naming the status its reconnection gets. */
  async function expectEnded(client: SseClient, status: number) {
    expect(await endOf(client)).toBe('end');
    expect(client.comments.at(-1)?.text).toBe(
      `this stream's credential no longer authenticates its caller (a new request with it answers ${status}); connect again with a valid one`,
    );
  }

  /** The stream is live: an event published now reaches it. */
  async function expectLive(client: SseClient, company: TestCompany) {
    const before = client.events.length;
    await publishEvents(t, company.companyId, 1);
    await client.waitForEvents(before + 1);
  }

  describe('Interface B: the API key', () => {
    it('revoked: the stream ends, with no event after the revocation; the reconnection gets 401', async () => {
      const acme = await registerCompany(t.http, 'Acme');
      const reader = await createKey(acme, ['events:read']);
      const client = await keyStream(reader.key);
      await expectLive(client, acme);

      await t.http.delete(`/v1/api-keys/${reader.id}`).set(acme.auth).expect(200);
      await expectEnded(client, 401);
      const received = client.events.length;
      await publishEvents(t, acme.companyId, 2);
      expect(client.events).toHaveLength(received);

      const again = await keyStream(reader.key);
      expect(again.status).toBe(401);
      expect(JSON.parse(again.body)).toEqual({ success: false, error: 'Invalid or revoked API key' });
    });

    it('expired: the stream ends once the key passes its expiresAt', async () => {
      const acme = await registerCompany(t.http, 'Acme');
      const reader = await createKey(acme, ['events:read'], acme.auth, new Date(Date.now() + 1500).toISOString());
      const client = await keyStream(reader.key);
      await expectLive(client, acme);
      expect(await endOf(client, 1000)).toBe('open');
      await expectEnded(client, 401);
      expect((await keyStream(reader.key)).status).toBe(401);
    });

    it('losing the events:read scope: the stream ends; the reconnection gets 403', async () => {
      const acme = await registerCompany(t.http, 'Acme');
      const reader = await createKey(acme, ['events:read', 'messages:write']);
      const client = await keyStream(reader.key);
      await expectLive(client, acme);
      // No route changes a key's scopes yet; any write that does (an admin tool, a migration) is followed.
      await t.model<ApiKey>(ApiKey.name).updateOne({ _id: reader.id, companyId: acme.companyId }, { $set: { scopes: ['messages:write'] } });
      await expectEnded(client, 403);
      const again = await keyStream(reader.key);
      expect(again.status).toBe(403);
      expect(JSON.parse(again.body)).toEqual({ success: false, error: 'The API key lacks the scope events:read' });
    });

    it("revoked with its creator's demotion: the stream of a demoted admin's key ends", async () => {
      const acme = await registerCompany(t.http, 'Acme');
      const admin = await addAgent(t, acme, 'admin');
      const reader = await createKey(acme, ['events:read'], admin.auth);
      const client = await keyStream(reader.key);
      await expectLive(client, acme);
      await t.http.patch(`/v1/agents/${admin.agentId}`).set(acme.auth).send({ role: 'agent' }).expect(200);
      await expectEnded(client, 401);
    });
  });

  describe('Interface A: the bearer token', () => {
    it.each([
      ['deactivated', { isActive: false }],
      ['given another role', { role: 'supervisor' }],
      ['given a new password', { password: 'a completely new password' }],
    ])('its agent %s: the stream ends; the reconnection gets 401', async (_, change) => {
      const acme = await registerCompany(t.http, 'Acme');
      const agent = await addAgent(t, acme, 'agent');
      const client = await agentStream(agent.auth);
      await expectLive(client, acme);
      await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send(change).expect(200);
      await expectEnded(client, 401);
      const again = await agentStream(agent.auth);
      expect(again.status).toBe(401);
      expect(JSON.parse(again.body)).toMatchObject({ status: 401 });
    });

    it('expired: the stream ends once the token passes its exp', async () => {
      const acme = await registerCompany(t.http, 'Acme');
      const now = Math.floor(Date.now() / 1000);
      const token = jwt.sign({ sub: acme.agentId, companyId: acme.companyId, role: 'admin', ver: 0, iat: now, exp: now + 2 }, TEST_JWT_SECRET, {
        issuer: 'parley',
        audience: 'parley-api',
      });
      const auth = { Authorization: `Bearer ${token}` };
      const client = await agentStream(auth);
      await expectLive(client, acme);
      await expectEnded(client, 401);
      const again = await agentStream(auth);
      expect(again.status).toBe(401);
      expect(JSON.parse(again.body)).toMatchObject({ message: 'The bearer token has expired' });
    });
  });

  it('keeps the streams whose credential still holds, through many checks and changes that do not touch it', async () => {
    const acme = await registerCompany(t.http, 'Acme');
    const agent = await addAgent(t, acme, 'agent');
    const reader = await createKey(acme, ['events:read']);
    const other = await createKey(acme, ['events:read']);
    const streams = [await agentStream(agent.auth), await keyStream(reader.key)];
    await t.http.patch(`/v1/agents/${agent.agentId}`).set(acme.auth).send({ name: 'Renamed', status: 'away' }).expect(200);
    await t.http.delete(`/v1/api-keys/${other.id}`).set(acme.auth).expect(200);
    for (const client of streams) expect(await endOf(client, 6 * CHECK_MS)).toBe('open');
    for (const client of streams) await expectLive(client, acme);
  });
});
