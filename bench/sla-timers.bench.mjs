// Benchmark of SLA deadlines as durable timers (a script, not a test): npm run bench:sla [-- options]
// Starts the built app on CPU 0 (the embedded engine in its own process, also on CPU 0, or MONGODB_URI) and, from
// this process on CPU 1:
// 1. opens --open conversations (inbound messages through the API) on a channel no SLA policy matches, lets the
//    event log's consumers settle, and measures the idle app's and engine's CPU per second over --idle seconds:
//    the idle cost without SLA timers;
// 2. opens as many again under an SLA policy (first response and resolution due in a day, warnings before each:
//    four live timers per conversation), and measures the idle CPU the same way: the cost of the live timers;
// 3. opens --burst conversations under a policy whose first response falls due --due seconds later, as fast as the
//    API takes them (their deadlines fall due in the same minute), and measures each `sla.breached`'s lateness: the
//    event's occurredAt (written by the firing) minus its dueAt, p50 / p99 / max.
// Prints the figures with the machine's load (uptime) before and after. The run holds /tmp/parley-load.lock (flock).
// Options: --open 10000 --burst 1000 --due 120 --idle 30 --concurrency 32
import { execSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { ObjectId } = await import('mongodb');
const { Api, forEachConcurrently } = await import('../harness/api.mjs');
const { LatencyRecorder } = await import('../harness/stats.mjs');
const { startApp } = await import('./lib/app.mjs');
const { settled } = await import('./lib/consumers.mjs');
const { describeMachine, foreignLoad } = await import('./lib/machine.mjs');
const { connect, phone, registerCompany } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    open: { type: 'string', default: '10000' },
    burst: { type: 'string', default: '1000' },
    due: { type: 'string', default: '120' },
    idle: { type: 'string', default: '30' },
    concurrency: { type: 'string', default: '32' },
  },
});
const open = Number(options.open);
const burst = Number(options.burst);
const dueSeconds = Number(options.due);
const idleSeconds = Number(options.idle);
const concurrency = Number(options.concurrency);
const DAY = 86_400;

const log = (line) => process.stderr.write(`[bench:sla ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
const uptime = () => execSync('uptime').toString().trim();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const machine = describeMachine();
const loadBefore = uptime();
const { app, engine, base, databaseUri } = await startApp({ engineProcess: true });
const { client, db } = await connect(databaseUri);
try {
  const api = new Api(base);
  const company = await registerCompany(api, 'Levels');
  const policy = (body) => api.json('POST', '/v1/sla-policies', { token: company.token, body });
  await policy({ name: 'A day', conditions: { channels: ['whatsapp'] }, firstResponseSeconds: DAY, resolutionSeconds: 2 * DAY, warnBeforeSeconds: 3600 });
  await policy({ name: 'Burst', conditions: { channels: ['burst'] }, firstResponseSeconds: dueSeconds });

  const openMany = async (count, area, channel) => {
    const started = Date.now();
    await forEachConcurrently(count, concurrency, (i) =>
      api.call('POST', '/api/external/messages', { apiKey: company.apiKey, body: { from: { phone: phone(area, i) }, text: `Hello ${i}`, channel } }),
    );
    return (Date.now() - started) / 1000;
  };
  const idleCpu = async () => {
    await settled(db);
    const other = await foreignLoad();
    const [appBefore, engineBefore] = [app.cpuMs(), engine?.cpuMs() ?? 0];
    await sleep(idleSeconds * 1000);
    const perSecond = (after, before) => (after - before) / idleSeconds;
    return { app: perSecond(app.cpuMs(), appBefore), engine: perSecond(engine?.cpuMs() ?? 0, engineBefore), other };
  };

  log(`app on ${base}; opening ${open} conversations without an SLA policy`);
  const plainSeconds = await openMany(open, 415, 'sms');
  const without = await idleCpu();
  log(`idle without SLA timers: app ${without.app.toFixed(1)} ms/s, engine ${without.engine.toFixed(1)} ms/s`);

  log(`opening ${open} conversations under an SLA policy (four timers each)`);
  const slaSeconds = await openMany(open, 416, 'whatsapp');
  const withTimers = await idleCpu();
  const timers = await db.collection('timers').countDocuments({ kind: 'sla' });
  log(`idle with ${timers} SLA timers: app ${withTimers.app.toFixed(1)} ms/s, engine ${withTimers.engine.toFixed(1)} ms/s`);

  log(`opening ${burst} conversations whose first response falls due ${dueSeconds} s later`);
  const burstStarted = Date.now();
  const burstSeconds = await openMany(burst, 417, 'burst');
  const lateness = await breachLateness(company.companyId, burstStarted);
  const loadAfter = uptime();

  const ratio = (a, b) => (b > 0 ? (a / b).toFixed(2) : 'n/a');
  const totalWithout = without.app + without.engine;
  const totalWith = withTimers.app + withTimers.engine;
  console.log('');
  console.log(`SLA deadlines as durable timers: ${open} open conversations with live timers, ${burst} deadlines in the same minute`);
  console.log(`machine: ${machine.cpus} vCPUs, ${machine.model}, Node.js ${machine.node}; engine in its own process on CPU 0`);
  console.log(`load before: ${loadBefore}`);
  console.log(`load after:  ${loadAfter}`);
  console.log(`opened ${open} conversations in ${plainSeconds.toFixed(0)} s without a policy, ${open} in ${slaSeconds.toFixed(0)} s with one (${timers} SLA timers), ${burst} in ${burstSeconds.toFixed(0)} s for the burst`);
  console.log(`idle CPU per second over ${idleSeconds} s, without SLA timers: app ${without.app.toFixed(1)} ms, engine ${without.engine.toFixed(1)} ms (other load ${(100 * without.other).toFixed(0)}%)`);
  console.log(`idle CPU per second over ${idleSeconds} s, with ${timers} SLA timers: app ${withTimers.app.toFixed(1)} ms, engine ${withTimers.engine.toFixed(1)} ms (other load ${(100 * withTimers.other).toFixed(0)}%)`);
  console.log(`ratio with / without: app ${ratio(withTimers.app, without.app)}, app + engine ${ratio(totalWith, totalWithout)} (target ≤ 2)`);
  console.log(
    `breach lateness (occurredAt - dueAt) over ${lateness.length} deadlines: p50 ${lateness.percentile(50).toFixed(0)} ms, ` +
      `p99 ${lateness.percentile(99).toFixed(0)} ms, max ${lateness.percentile(100).toFixed(0)} ms (target p99 ≤ 5000 ms)`,
  );
} finally {
  await client.close();
  await app.stop();
  await engine?.stop();
}

/** Every burst deadline's breach, once all have fired: how late each was written. */
async function breachLateness(id, since) {
  const companyId = new ObjectId(id);
  const deadline = since + (dueSeconds + 600) * 1000;
  let rows = [];
  while (Date.now() < deadline) {
    rows = await db.collection('events').find({ companyId, type: 'sla.breached' }, { projection: { occurredAt: 1, 'data.dueAt': 1 } }).toArray();
    if (rows.length >= burst) break;
    await sleep(1000);
  }
  if (rows.length !== burst) throw new Error(`${rows.length} breaches of ${burst} were logged`);
  const lateness = new LatencyRecorder();
  for (const row of rows) lateness.add(row.occurredAt.getTime() - Date.parse(row.data.dueAt));
  return lateness;
}
