import { ObjectId } from 'mongodb';
import { forEachConcurrently } from '../../harness/api.mjs';
import { deadUrl, Receiver } from '../../harness/receivers.mjs';
import { percentile } from '../../harness/stats.mjs';
import { phone } from './seed.mjs';

const SLOW_MS = 2_000;
const EVENT_CONCURRENCY = 16;
const BACKLOG_TIMEOUT_MS = 120_000;
const DRAIN_TIMEOUT_MS = 180_000;
/** The lease that holds a webhook's lane while the backlog is built: no worker may claim it before this. */
const HELD_UNTIL = new Date('2100-01-01T00:00:00Z');
const HOLDER = 'bench-backlog';

/** Three healthy receivers, one that answers after 2 s, and a port where nothing listens. */
export async function startReceivers() {
  const healthy = await Promise.all([1, 2, 3].map((n) => new Receiver(`healthy-${n}`).listen()));
  const slow = await new Receiver('slow', SLOW_MS).listen();
  return { healthy, slow, dead: await deadUrl(), close: () => Promise.all([...healthy, slow].map((r) => r.close())) };
}

async function register(api, company, url, name) {
  const body = { name, url, events: ['message.received'] };
  return api.json('POST', '/v1/webhooks', { token: company.token, body });
}

const laneId = (webhookId) => new ObjectId(webhookId.slice('wh_'.length));

async function waitUntil(check, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * The fan-out's drain. Registers a webhook per receiver (the dead and slow ones too when `withBad`) and holds
 * their lanes (a lease no worker can take, written into the database as a crashed worker would leave it), so the
 * webhooks are subscribed but nothing is attempted. Then sends `events` inbound messages through the API (each
 * one `message.received`) and waits until the fan-out has recorded every delivery: the backlog. Then frees the
 * lanes (the resume) and waits until every healthy receiver holds every delivery. Deliveries per second and the
 * percentiles count from the resume, so they measure the drain alone, not how fast events got in (reported
 * apart as events/s), with the CPU time the app and the engine spent on each healthy delivery meanwhile (what a
 * machine shared with other loads disturbs least). Last, deletes the webhooks (which drops the bad ones' pending
 * deliveries).
 */
export async function drain(api, db, company, receivers, { events, withBad, app, engine }) {
  const { healthy, slow, dead } = receivers;
  for (const receiver of [...healthy, slow]) receiver.reset();
  const hooks = [];
  for (const receiver of healthy) {
    const created = await register(api, company, receiver.url, receiver.name);
    receiver.secret = created.secret;
    hooks.push(created.id);
  }
  let deadHook;
  if (withBad) {
    deadHook = (await register(api, company, dead, 'dead')).id;
    const created = await register(api, company, slow.url, 'slow');
    slow.secret = created.secret;
    hooks.push(deadHook, created.id);
  }
  const lanes = db.collection('webhooks');
  const ids = hooks.map(laneId);
  await lanes.updateMany({ _id: { $in: ids } }, { $set: { leaseOwner: HOLDER, leaseUntil: HELD_UNTIL } });

  const started = Date.now();
  await forEachConcurrently(events, EVENT_CONCURRENCY, (i) =>
    api.call('POST', '/api/external/messages', {
      apiKey: company.apiKey,
      body: { from: { phone: phone(646, i % 200) }, text: `Event ${i}`, channel: 'whatsapp' },
    }),
  );
  const eventsSentMs = Date.now() - started;
  const deliveries = db.collection('webhook_deliveries');
  await waitUntil(
    async () => (await deliveries.countDocuments({ webhookId: { $in: ids }, status: 'pending' })) >= events * ids.length,
    BACKLOG_TIMEOUT_MS,
    `${events * ids.length} pending deliveries`,
  );
  const backlogMs = Date.now() - started;

  const cpuAtResume = { app: app.cpuMs(), engine: engine?.cpuMs() };
  const resumedAt = Date.now();
  await lanes.updateMany({ _id: { $in: ids } }, { $set: { leaseOwner: null, leaseUntil: new Date(0) } });
  const deadline = resumedAt + DRAIN_TIMEOUT_MS;
  while (healthy.some((r) => r.deliveries.size < events) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const cpu = { app: app.cpuMs() - cpuAtResume.app, engine: engine ? engine.cpuMs() - cpuAtResume.engine : NaN };
  const delivered = healthy.flatMap((r) => [...r.deliveries.values()]);
  const sinceResume = delivered.map((d) => d.receivedAt - resumedAt);
  const drainMs = Math.max(...sinceResume);
  const deadAttempts = deadHook ? await attemptsLogged(api, company, deadHook) : 0;
  for (const id of hooks) await api.call('DELETE', `/v1/webhooks/${id}`, { token: company.token });
  return {
    withBad,
    delivered: delivered.length,
    expected: events * healthy.length,
    perSecond: delivered.length / (drainMs / 1000),
    eventsPerSecond: events / (eventsSentMs / 1000),
    backlogMs,
    drainMs,
    p50: percentile(sinceResume, 50),
    p99: percentile(sinceResume, 99),
    appCpuUs: (1000 * cpu.app) / delivered.length,
    engineCpuUs: (1000 * cpu.engine) / delivered.length,
    badSignatures: healthy.reduce((sum, r) => sum + r.badSignatures, 0) + slow.badSignatures,
    slowDelivered: slow.deliveries.size,
    deadAttempts,
  };
}

/** Attempts the app logged for a webhook's deliveries (a refused connection leaves no trace at the receiver). */
async function attemptsLogged(api, company, webhookId) {
  let attempts = 0;
  let cursor = '';
  do {
    const path = `/v1/webhooks/${webhookId}/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const page = await api.json('GET', path, { token: company.token });
    attempts += page.data.reduce((sum, delivery) => sum + delivery.attempts.length, 0);
    cursor = page.nextCursor;
  } while (cursor);
  return attempts;
}
