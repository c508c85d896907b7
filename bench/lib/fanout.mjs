import { forEachConcurrently } from '../../harness/api.mjs';
import { deadUrl, Receiver } from '../../harness/receivers.mjs';
import { phone } from './seed.mjs';
import { percentile } from '../../harness/stats.mjs';

const SLOW_MS = 2_000;
const EVENT_CONCURRENCY = 16;
const DRAIN_TIMEOUT_MS = 180_000;

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

/**
 * One fan-out: registers a webhook per receiver (the dead and slow ones too when `withBad`), sends
 * `events` inbound messages through the API (each one `message.received` event), waits until every
 * healthy receiver holds every delivery, then deletes the webhooks (which drops the bad ones'
 * pending deliveries, so they do not load the next measurement). Deliveries per second count from
 * the first event sent to the last healthy delivery; latency is from the event's payload timestamp; the drain
 * is the time from the last answered send to the last healthy delivery.
 */
export async function fanOut(api, company, receivers, { events, withBad }) {
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

  const started = Date.now();
  await forEachConcurrently(events, EVENT_CONCURRENCY, (i) =>
    api.call('POST', '/api/external/messages', {
      apiKey: company.apiKey,
      body: { from: { phone: phone(646, i % 200) }, text: `Event ${i}`, channel: 'whatsapp' },
    }),
  );
  const eventsSentMs = Date.now() - started;
  const deadline = Date.now() + DRAIN_TIMEOUT_MS;
  while (healthy.some((r) => r.deliveries.size < events) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }

  const deliveries = healthy.flatMap((r) => [...r.deliveries.values()]);
  const lastAt = Math.max(...deliveries.map((d) => d.receivedAt));
  const deadAttempts = deadHook ? await attemptsLogged(api, company, deadHook) : 0;
  for (const id of hooks) await api.call('DELETE', `/v1/webhooks/${id}`, { token: company.token });
  return {
    withBad,
    delivered: deliveries.length,
    expected: events * healthy.length,
    perSecond: deliveries.length / ((lastAt - started) / 1000),
    eventsPerSecond: events / (eventsSentMs / 1000),
    drainMs: lastAt - (started + eventsSentMs),
    p50: percentile(deliveries.map((d) => d.latencyMs), 50),
    p99: percentile(deliveries.map((d) => d.latencyMs), 99),
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
