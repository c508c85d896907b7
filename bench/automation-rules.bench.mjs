// Benchmark of automation rules (a script, not a test): npm run bench:rules [-- options]
// Starts the built app on CPU 0 (the embedded engine in its own process, also on CPU 0, or MONGODB_URI) and, from
// this process on CPU 1:
// 1. rules that match nothing: one company with --rules active rules on `message.received` whose conditions match no
//    conversation, one with none; --rounds times, each company first in turn, --events inbound messages (a new
//    conversation each) to each company, and the app's and engine's CPU from the first message until the consumers
//    settle. Prints the CPU the rules add per inbound message (with rules minus without): each message's
//    `message.received` meets every rule (target ≤ 5 ms per event, the flows' bound);
// 2. time triggers: a rule `{ timer: { after: --after, since: "created" } }` (action add_tags), then --timers
//    conversations opened as fast as the API takes them (their timers fall due in the same minute); each run's
//    lateness: its record's createdAt (written by the firing) minus the timer's due moment, p50 / p99 / max.
// Prints the figures with the machine's load (uptime) before and after. The run holds /tmp/parley-load.lock (flock).
// Options: --rules 200 --events 1000 --rounds 2 --timers 1000 --after 2m --concurrency 32
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { rerunPinnedUnderLock } from '../harness/pinning.mjs';

rerunPinnedUnderLock(fileURLToPath(import.meta.url));

const { ObjectId } = await import('mongodb');
const { Api, forEachConcurrently } = await import('../harness/api.mjs');
const { LatencyRecorder } = await import('../harness/stats.mjs');
const { settled } = await import('./lib/consumers.mjs');
const { foreignLoad } = await import('./lib/machine.mjs');
const { progressLog, startScenario, uptime } = await import('./lib/scenario.mjs');
const { phone, registerCompany } = await import('./lib/seed.mjs');

const { values: options } = parseArgs({
  options: {
    rules: { type: 'string', default: '200' },
    events: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '2' },
    timers: { type: 'string', default: '1000' },
    after: { type: 'string', default: '2m' },
    concurrency: { type: 'string', default: '32' },
  },
});
const rules = Number(options.rules);
const events = Number(options.events);
const rounds = Number(options.rounds);
const timers = Number(options.timers);
const concurrency = Number(options.concurrency);
const afterMs = Number.parseInt(options.after, 10) * { m: 60_000, h: 3_600_000 }[options.after.slice(-1)];
if (!(afterMs > 0)) throw new Error(`--after ${options.after}: give minutes or hours, e.g. 2m`);

const log = progressLog('rules');

const { machine, loadBefore, app, engine, base, db, stop } = await startScenario();
try {
  const api = new Api(base);
  const ruled = await registerCompany(api, 'Ruled');
  const plain = await registerCompany(api, 'Plain');
  log(`app on ${base}; ${rules} rules that match nothing`);
  await forEachConcurrently(rules, 4, (i) =>
    api.json('POST', '/v1/automation-rules', {
      token: ruled.token,
      body: {
        name: `Never ${i}`,
        trigger: { event: 'message.received' },
        conditions: {
          and: [
            { field: 'status', op: 'eq', value: 'human' },
            { field: 'tags', op: 'eq', value: `never-${i}` },
          ],
        },
        actions: [{ type: 'add_tags', tags: [`never-${i}`] }],
      },
    }),
  );

  let area = 500;
  const inbound = async (company, count) => {
    const from = area++;
    await forEachConcurrently(count, concurrency, (i) =>
      api.call('POST', '/api/external/messages', { apiKey: company.apiKey, body: { from: { phone: phone(from, i) }, text: `Hello ${i}` } }),
    );
  };
  const cpuOf = async (company, count) => {
    await settled(db);
    const [appBefore, engineBefore] = [app.cpuMs(), engine?.cpuMs() ?? 0];
    await inbound(company, count);
    await settled(db);
    return { app: app.cpuMs() - appBefore, engine: (engine?.cpuMs() ?? 0) - engineBefore };
  };
  log('warming up');
  await inbound(plain, Math.min(events, 100));
  await inbound(ruled, Math.min(events, 100));
  const other = await foreignLoad();
  const without = { app: 0, engine: 0 };
  const withRules = { app: 0, engine: 0 };
  for (let round = 1; round <= rounds; round++) {
    // Alternately first: neither company profits from the other's warm-up.
    const phases = [
      [plain, without],
      [ruled, withRules],
    ];
    for (const [company, sum] of round % 2 ? phases : phases.reverse()) {
      const cpu = await cpuOf(company, events);
      sum.app += cpu.app;
      sum.engine += cpu.engine;
    }
    log(`round ${round}/${rounds}: app ${withRules.app.toFixed(0)} ms with rules, ${without.app.toFixed(0)} ms without, so far`);
  }
  const runs = await db.collection('automation_runs').countDocuments({});
  if (runs !== 0) throw new Error(`${runs} rule runs were recorded: the rules were to match nothing`);

  log(`a rule ${options.after} after creation; opening ${timers} conversations`);
  const timed = await registerCompany(api, 'Timed');
  await api.json('POST', '/v1/automation-rules', {
    token: timed.token,
    body: { name: 'Later', trigger: { timer: { after: options.after, since: 'created' } }, actions: [{ type: 'add_tags', tags: ['later'] }] },
  });
  const burstStarted = Date.now();
  await inbound(timed, timers);
  const burstSeconds = (Date.now() - burstStarted) / 1000;
  const lateness = await runLateness(timed.companyId, burstStarted);
  const loadAfter = uptime();

  const perEvent = (sum) => sum / (rounds * events);
  const added = { app: perEvent(withRules.app - without.app), engine: perEvent(withRules.engine - without.engine) };
  console.log('');
  console.log(
    `Automation rules: ${rules} rules matching nothing, ${rounds} × ${events} inbound messages; ${timers} time triggers in the same minute`,
  );
  console.log(`machine: ${machine.cpus} vCPUs, ${machine.model}, Node.js ${machine.node}; engine in its own process on CPU 0`);
  console.log(`load before: ${loadBefore}`);
  console.log(`load after:  ${loadAfter}`);
  console.log(`other load while measuring CPU: ${(100 * other).toFixed(0)}%`);
  console.log(
    `CPU per inbound message without rules: app ${perEvent(without.app).toFixed(2)} ms, engine ${perEvent(without.engine).toFixed(2)} ms; ` +
      `with ${rules} rules: app ${perEvent(withRules.app).toFixed(2)} ms, engine ${perEvent(withRules.engine).toFixed(2)} ms`,
  );
  console.log(
    `added by the rules per message.received: app ${added.app.toFixed(2)} ms, app + engine ${(added.app + added.engine).toFixed(2)} ms (target ≤ 5 ms)`,
  );
  console.log(
    `time-trigger lateness (run recorded - due) over ${lateness.length} triggers opened in ${burstSeconds.toFixed(0)} s: ` +
      `p50 ${lateness.percentile(50).toFixed(0)} ms, p99 ${lateness.percentile(99).toFixed(0)} ms, max ${lateness.percentile(100).toFixed(0)} ms (target p99 ≤ 5000 ms)`,
  );
} finally {
  await stop();
}

/** Every time trigger's run, once all have fired: how late each was recorded (its trigger key ends with its due moment). */
async function runLateness(id, since) {
  const companyId = new ObjectId(id);
  const deadline = since + afterMs + 600_000;
  let rows = [];
  while (Date.now() < deadline) {
    rows = await db
      .collection('automation_runs')
      .find({ companyId }, { projection: { createdAt: 1, triggerKey: 1 } })
      .toArray();
    if (rows.length >= timers) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  if (rows.length !== timers) throw new Error(`${rows.length} runs of ${timers} time triggers were recorded`);
  const lateness = new LatencyRecorder();
  for (const row of rows) lateness.add(row.createdAt.getTime() - Number(row.triggerKey.split(':').pop()));
  return lateness;
}
