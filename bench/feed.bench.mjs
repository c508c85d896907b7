// Benchmark of the event feed (a script, not a test): npm run bench:feed [-- options]
// Starts the built app on CPU 0 (the embedded engine in its own process, also on CPU 0, or MONGODB_URI), opens
// --streams Server-Sent Events streams of one company on it from this process (CPU 1), then sends --events
// inbound messages through the API (16 in flight), each one `message.received` event, which every stream
// receives. It prints the delivery latency (the event's occurredAt → the frame arrived at the client) p50/p99
// over every delivery, split at the event's loggedAt read back from the log (the relay's share, then the feed's:
// loggedAt is taken just before the append, so the feed's share includes the append's own writes), the app's CPU
// time over the burst, checks each stream got every event once and in order, samples the app's RSS (idle,
// with the streams open, peak during the burst, after), and finally sends SIGTERM with the streams still open
// and counts how many ended cleanly. The run holds /tmp/parley-load.lock (flock), like `npm run bench`.
// Options: --streams 500 --events 2000 --concurrency 16
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { ObjectId } = await import('mongodb');
const { Api, forEachConcurrently } = await import('../harness/api.mjs');
const { LatencyRecorder } = await import('../harness/stats.mjs');
const { startApp } = await import('./lib/app.mjs');
const { Arrivals, FeedReader } = await import('./lib/feed.mjs');
const { describeMachine, foreignLoad } = await import('./lib/machine.mjs');
const { connect, phone, registerCompany } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    streams: { type: 'string', default: '500' },
    events: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '16' },
  },
});
const streams = Number(options.streams);
const events = Number(options.events);
const concurrency = Number(options.concurrency);
const OPEN_CONCURRENCY = 20;
const DELIVERY_TIMEOUT_MS = 180_000;

const log = (line) => process.stderr.write(`[bench:feed ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const mib = (value) => `${value.toFixed(0)} MiB`;

const machine = describeMachine();
const { app, engine, base, databaseUri } = await startApp({ engineProcess: true, env: { EVENT_STREAMS_PER_COMPANY: String(streams) } });
const rss = { started: app.rssMiB() };
let stopped = false;
try {
  const api = new Api(base);
  const company = await registerCompany(api, 'Feed');
  log(`app on ${base} (pid ${app.pid}); opening ${streams} streams`);
  const latencies = new LatencyRecorder();
  const arrivals = new Arrivals();
  const readers = Array.from({ length: streams }, () => new FeedReader(latencies, arrivals));
  const url = `${base}/v1/events/stream?types=message.received`;
  await forEachConcurrently(readers, OPEN_CONCURRENCY, (reader) => reader.open(url, { authorization: `Bearer ${company.token}` }));
  rss.streamsOpen = app.rssMiB();
  const otherLoad = await foreignLoad();
  log(`${streams} streams open; app RSS ${mib(rss.streamsOpen)}; other load on the machine ${(100 * otherLoad).toFixed(0)}% of its CPU`);

  let peak = rss.streamsOpen;
  const sampler = setInterval(() => (peak = Math.max(peak, app.rssMiB())), 200);
  const cpuBefore = app.cpuMs();
  const started = Date.now();
  await forEachConcurrently(events, concurrency, (i) =>
    api.call('POST', '/api/external/messages', {
      apiKey: company.apiKey,
      body: { from: { phone: phone(212, i % 100) }, text: `Feed event ${i}`, channel: 'whatsapp' },
    }),
  );
  const sentMs = Date.now() - started;
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  while (readers.some((reader) => reader.events < events) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  clearInterval(sampler);
  const cpuMs = app.cpuMs() - cpuBefore;
  rss.peak = peak;
  rss.after = app.rssMiB();
  const lastAt = Math.max(...readers.map((reader) => reader.lastAt));

  const { relay, sinceLogged } = await splitLatency(databaseUri, company.companyId, arrivals);
  const complete = readers.filter((reader) => reader.events === events).length;
  const outOfOrder = readers.reduce((sum, reader) => sum + reader.outOfOrder, 0);
  const dropped = readers.filter((reader) => reader.ended !== null).length;

  log('SIGTERM with the streams open');
  const stopping = Date.now();
  await app.stop();
  stopped = true;
  const stopMs = Date.now() - stopping;
  await new Promise((resolve) => setTimeout(resolve, 200));
  const cleanEnds = readers.filter((reader) => reader.ended === 'end').length;

  console.log('');
  console.log(`Event feed: ${streams} streams on one app process, a burst of ${events} events (${concurrency} senders)`);
  console.log(`machine: ${machine.cpus} vCPUs, ${machine.model}, Node.js ${machine.node}; engine in its own process on CPU 0`);
  console.log(`other load on the machine before the burst: ${(100 * otherLoad).toFixed(0)}% of its CPU${otherLoad > 0.15 ? ' (*** figures may be disturbed ***)' : ''}`);
  console.log(`events sent in ${(sentMs / 1000).toFixed(1)} s (${(events / (sentMs / 1000)).toFixed(0)}/s); last delivery ${((lastAt - started) / 1000).toFixed(1)} s after the first send`);
  console.log(`deliveries: ${latencies.length} of ${streams * events} (${(latencies.length / ((lastAt - started) / 1000)).toFixed(0)}/s); streams complete ${complete}/${streams}; out of order or repeated ${outOfOrder}; cut during the burst ${dropped}`);
  console.log(`delivery latency (occurredAt → client): p50 ${latencies.percentile(50).toFixed(0)} ms, p99 ${latencies.percentile(99).toFixed(0)} ms, max ${latencies.percentile(100).toFixed(0)} ms`);
  console.log(`  of which the relay (occurredAt → loggedAt, per event): p50 ${relay.percentile(50).toFixed(0)} ms, p99 ${relay.percentile(99).toFixed(0)} ms; the feed (loggedAt → client): p50 ${sinceLogged.percentile(50).toFixed(0)} ms, p99 ${sinceLogged.percentile(99).toFixed(0)} ms`);
  console.log(`app CPU over the burst: ${(cpuMs / 1000).toFixed(1)} s, ${((1000 * cpuMs) / Math.max(1, latencies.length)).toFixed(1)} µs per delivery (the inbound requests included)`);
  console.log(`app RSS: ${mib(rss.started)} started, ${mib(rss.streamsOpen)} with the streams open, ${mib(rss.peak)} peak during the burst, ${mib(rss.after)} after`);
  console.log(`SIGTERM: the app exited in ${stopMs} ms; streams ended cleanly ${cleanEnds}/${streams}`);
} finally {
  if (!stopped) await app.stop();
  await engine?.stop();
}

/** When each event of the burst was logged (from the log itself): the relay's share and the feed's share of the latency. */
async function splitLatency(uri, companyId, arrivals) {
  const { client, db } = await connect(uri);
  try {
    const rows = await db
      .collection('events')
      .find({ companyId: new ObjectId(companyId), type: 'message.received' }, { projection: { sequence: 1, occurredAt: 1, loggedAt: 1 } })
      .toArray();
    const relay = new LatencyRecorder();
    for (const row of rows) relay.add(row.loggedAt - row.occurredAt);
    return { relay, sinceLogged: arrivals.sinceLogged(new Map(rows.map((row) => [row.sequence, row.loggedAt.getTime()]))) };
  } finally {
    await client.close();
  }
}
