import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import request from 'supertest';
import { DurableTimers } from '../../src/lanes/durable-timers.js';
import { MetricsServer } from '../../src/metrics/metrics-server.js';
import { createApiKey, registerCompany } from '../support/factories.js';
import { createTestApp, TEST_JWT_SECRET, TEST_WEBHOOK_SECRET_KEYS, type TestApp } from '../support/test-app.js';
import { waitFor } from '../support/wait-for.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';

/** A timer kind whose firing waits for the test: its timer stays due meanwhile, a lane in the backlog. */
let releaseTimer: () => void = () => undefined;
const timerGate = new Promise<void>((resolve) => (releaseTimer = resolve));

@Injectable()
class StuckTimer implements OnModuleInit {
  constructor(private readonly timers: DurableTimers) {}

  onModuleInit(): void {
    this.timers.register('metrics-test', () => timerGate);
  }
}

@Module({ providers: [StuckTimer] })
class StuckTimerModule {}

/** The value of the sample `name{labels}` in a Prometheus text answer, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_:]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const present = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3]);
  }
  return undefined;
}

describe('GET /metrics (outside production: open on the API port)', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    t = await createTestApp({ imports: [StuckTimerModule] });
  });
  afterAll(async () => {
    releaseTimer();
    await t.close();
    await receiver.close();
  });

  it('serves the Prometheus text format with the process and event-loop metrics', async () => {
    const response = await t.http.get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(response.text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sample(response.text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(response.text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(sample(response.text, 'parley_event_streams_open')).toBe(0);
  });

  it('times requests by route template, method and status, never by the path itself', async () => {
    await t.http.get('/health/live').expect(200);
    await t.http.get('/v1/conversations/6650f0c2aaaaaaaaaaaaaaaa').expect(401);
    await t.http.get('/no/such/path/123').expect(404);
    const text = (await t.http.get('/metrics').expect(200)).text;
    expect(sample(text, 'parley_http_request_duration_seconds_count', { route: '/health/live', method: 'GET', status: '200' })).toBe(1);
    expect(sample(text, 'parley_http_request_duration_seconds_count', { route: '/v1/conversations/:id', method: 'GET', status: '401' })).toBe(1);
    expect(sample(text, 'parley_http_request_duration_seconds_count', { route: '(unmatched)', method: 'GET', status: '404' })).toBe(1);
    expect(text).not.toContain('6650f0c2aaaaaaaaaaaaaaaa');
    expect(text).not.toContain('/no/such/path');
  });

  it("reports a lane's backlog and its oldest item's age while it is due, and the timer's lateness once it fired", async () => {
    const company = await registerCompany(t.http);
    // No process claims a timer until the due one has been seen waiting: a claim would take it out of the backlog.
    const store = (t.app.get(DurableTimers) as unknown as { store: { claim: () => Promise<null> } }).store;
    const claims = jest.spyOn(store, 'claim').mockResolvedValue(null);
    await t.app.get(DurableTimers).set(company.companyId, 'metrics-test', 'one', new Date(Date.now() - 5_000));
    const labels = { kind: 'durable-timer', lane: 'metrics-test' };
    // The lanes' figures are read at most so often, so a scrape may first show the previous reading.
    const text = await waitFor(async () => {
      const scraped = (await t.http.get('/metrics').expect(200)).text;
      return sample(scraped, 'parley_lane_backlog', labels) === 1 && scraped;
    });
    expect(sample(text, 'parley_lane_oldest_due_seconds', labels)).toBeGreaterThanOrEqual(5);
    claims.mockRestore();
    releaseTimer();
    const fired = await waitFor(async () => {
      const after = (await t.http.get('/metrics')).text;
      return sample(after, 'parley_durable_timer_lateness_seconds_count', { kind: 'metrics-test' }) === 1 && after;
    });
    expect(sample(fired, 'parley_durable_timer_lateness_seconds_sum', { kind: 'metrics-test' })).toBeGreaterThanOrEqual(5);
    // Removed once fired: the next read of the lanes finds nothing due.
    await waitFor(async () => sample((await t.http.get('/metrics')).text, 'parley_lane_backlog', labels) === undefined, { intervalMs: 200 });
  });

  it("counts webhook attempts by outcome and the event relay's lag, for an inbound message delivered", async () => {
    const company = await registerCompany(t.http, 'Hooked');
    const key = await createApiKey(t.http, company, ['messages:write']);
    receiver.answer('/ok', { status: 204 });
    await t.http
      .post('/v1/webhooks')
      .set(company.auth)
      .send({ url: receiver.url('/ok'), events: ['message.received'] })
      .expect(201);
    const before = sample((await t.http.get('/metrics')).text, 'parley_event_relay_lag_seconds_count') ?? 0;
    await t.http
      .post('/api/external/messages')
      .set('x-api-key', key)
      .send({ from: { phone: '+14155550100' }, text: 'Hi' })
      .expect(201);
    await receiver.received('/ok', 1);
    const text = await waitFor(async () => {
      const after = (await t.http.get('/metrics')).text;
      return sample(after, 'parley_webhook_attempts_total', { outcome: 'succeeded', response: '2xx' }) === 1 && after;
    });
    expect(sample(text, 'parley_event_relay_lag_seconds_count')).toBeGreaterThan(before);
  });
});

describe('GET /metrics in production', () => {
  let engine: EmbeddedMongo;
  const apps: TestApp[] = [];
  beforeAll(async () => {
    engine = await startEmbeddedMongo();
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await engine.stop();
  });

  async function start(env: Record<string, string>): Promise<TestApp> {
    const production = {
      NODE_ENV: 'production',
      MONGODB_URI: `${engine.uri}metrics${apps.length}`,
      JWT_SECRET: TEST_JWT_SECRET,
      WEBHOOK_SECRET_KEYS: TEST_WEBHOOK_SECRET_KEYS,
      PASSWORD_SCRYPT_LOG_N: '17',
    };
    const app = await createTestApp({ env: { ...production, ...env } });
    apps.push(app);
    return app;
  }

  it('is off by default', async () => {
    const t = await start({});
    await t.http.get('/metrics').expect(404);
  });

  it('answers only to the METRICS_TOKEN bearer', async () => {
    const t = await start({ METRICS_TOKEN: 'a-metrics-token-of-some-length' });
    await t.http.get('/metrics').expect(401);
    await t.http.get('/metrics').set('authorization', 'Bearer a-metrics-token-of-some-lengtX').expect(401);
    const response = await t.http.get('/metrics').set('authorization', 'Bearer a-metrics-token-of-some-length').expect(200);
    expect(response.text).toContain('# TYPE parley_http_request_duration_seconds histogram');
  });

  it('serves on METRICS_PORT alone, not on the API port', async () => {
    const t = await start({ METRICS_PORT: '0' });
    await t.http.get('/metrics').expect(404);
    const port = t.app.get(MetricsServer).port;
    expect(port).toBeGreaterThan(0);
    const response = await request(`http://127.0.0.1:${port}`).get('/metrics').expect(200);
    expect(response.text).toContain('# TYPE parley_lane_backlog gauge');
    await request(`http://127.0.0.1:${port}`).get('/v1/agents/me').expect(404);
  });
});
