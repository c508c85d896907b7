import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { registerCompany, type TestCompany } from '../support/factories.js';
import { createTestApp, type TestApp } from '../support/test-app.js';

const LIMIT = 40;
const SYNC_MS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two API processes (two Nest applications) on one database count one limit: each counts locally and
 * shares by batched `$inc` at most every THROTTLE_SYNC_MS while requests arrive, so together they admit
 * at most LIMIT + (what the other admitted since a process's last sync).
 */
describe('rate limits shared by processes on one database', () => {
  let engine: EmbeddedMongo;
  let uri: string;
  let client: MongoClient;
  let apps: TestApp[];
  let company: TestCompany;

  const env = () => ({ MONGODB_URI: uri, THROTTLE_LIMIT: String(LIMIT), THROTTLE_TTL_MS: '3600000', THROTTLE_SYNC_MS: String(SYNC_MS) });

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    uri = `${engine.uri}shared-limits`;
    client = await new MongoClient(uri).connect();
    apps = [await createTestApp({ env: env() }), await createTestApp({ env: env() })];
    company = await registerCompany(apps[0].http, 'Shared', { 'X-Forwarded-For': 'unused' });
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await client.close();
    await engine.stop();
  });

  it('two processes admit one limit between them, within the stated bound, and a restart does not reset it', async () => {
    // Alternate between the processes, a little slower than the sync interval: each then decides on a view
    // at most one sync old, so the other can have admitted at most one or two requests it has not seen yet.
    const admitted = [0, 0];
    let refusedByBoth = false;
    for (let i = 0; i < 4 * LIMIT && !refusedByBoth; i += 2) {
      const statuses = [];
      for (const [index, app] of apps.entries()) {
        const { status } = await app.http.get('/v1/agents').set(company.auth);
        if (status === 200) admitted[index] += 1;
        else expect(status).toBe(429);
        statuses.push(status);
        await sleep(SYNC_MS + 5);
      }
      refusedByBoth = statuses.every((status) => status === 429);
    }
    const total = admitted[0] + admitted[1];
    expect(refusedByBoth).toBe(true);
    // counted alone, each process would have admitted LIMIT: together they stay at the limit, plus the bound
    expect(total).toBeGreaterThanOrEqual(LIMIT);
    expect(total).toBeLessThanOrEqual(LIMIT + 2);
    expect(Math.min(...admitted)).toBeGreaterThan(LIMIT / 4);

    // The shared count, in the database.
    const counter = await client.db().collection<{ _id: string; hits: number }>('rate_limit_counters').findOne({ _id: { $regex: `^default:agent:${company.agentId}@` } });
    expect(counter?.hits).toBeGreaterThanOrEqual(total);

    // A process started now (a restart) learns the count at its first sync: at most one request gets through.
    await apps[0].close();
    apps[0] = await createTestApp({ env: env() });
    const first = await apps[0].http.get('/v1/agents').set(company.auth);
    await sleep(SYNC_MS + 5);
    expect([200, 429]).toContain(first.status);
    await apps[0].http.get('/v1/agents').set(company.auth).expect(429);
  });

  it('a process flushes its last counts when it shuts down', async () => {
    const app = await createTestApp({ env: { ...env(), THROTTLE_SYNC_MS: '60000' } });
    const other = await registerCompany(app.http, 'Flushed', { 'X-Forwarded-For': 'unused' });
    for (let i = 0; i < 5; i++) await app.http.get('/v1/agents').set(other.auth).expect(200);
    await app.close();
    const counter = await client.db().collection<{ _id: string; hits: number }>('rate_limit_counters').findOne({ _id: { $regex: `^default:agent:${other.agentId}@` } });
    expect(counter?.hits).toBe(5);
  });
});
