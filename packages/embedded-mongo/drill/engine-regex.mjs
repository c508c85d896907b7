// Engine regex drill: what one command with a catastrophic regex does to everybody else (src/query/work.ts). A
// standalone engine (default limits) holds 200 000 strings of 10 to 21 x's, over which `/(x+x+)+y/` backtracks
// exponentially (up to tens of milliseconds per string: the whole scan takes tens of minutes), and 20 strings of 30
// to 49 x's (hours each). A bystander connection pings every 10 ms throughout.
//   1. find with maxTimeMS 2000 over the 200 000: must fail with 50 MaxTimeMSExpired within 2 s and a little.
//   2. find without maxTimeMS, from a client that gives up after 10 s (socketTimeoutMS): the bystander must be served
//      throughout; once the client is gone the engine must stop working on it (its CPU drops).
//   3. count over the 20 catastrophic strings, without maxTimeMS: each regex execution is stopped after 250 ms and
//      abandoned (on a starved engine, once it has taken 250 ms of CPU running alone): it then matches nothing, as at
//      PCRE2's match limit; the count answers 0 after about 20 × 270 ms of the engine's CPU (20 × 520 when starved).
//   4. the same regex in $regexMatch: fails with 51156 after one budget.
// Prints the bystander's longest ping per phase and the share of a CPU the engine got meanwhile. The bound is in the
// engine thread's own time (slice 20 ms + regex budget 250 ms): on a machine where the engine gets a share s of a CPU,
// a turn takes 1/s as long in wall-clock time. Exits 1 if any check fails or a ping took longer than bound / s plus
// 330 ms of slack.
// Run: npm run drill -- engine-regex   (or node drill/engine-regex.mjs after npm run build)
import { readFileSync } from 'node:fs';
import { MongoClient } from 'mongodb';
import { startEngine } from './lib/engine.mjs';

const EVIL = /(x+x+)+y/;
const STRINGS = 200_000;
const CATASTROPHIC = 20;
const BOUND_MS = 20 + 250;
const SLACK_MS = 330;
const GIVE_UP_MS = 10_000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const violations = [];
const check = (ok, message) => {
  if (!ok) violations.push(message);
};

/** CPU seconds (user + system) the process's main thread, the engine's, has used. */
function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Pings every 10 ms on its own connection; `take()` answers the longest ping since the last take, in ms. */
function bystander(uri) {
  const client = new MongoClient(uri, { maxPoolSize: 1 });
  let longest = 0;
  let failures = 0;
  let running = true;
  const loop = (async () => {
    await client.connect();
    while (running) {
      const start = performance.now();
      try {
        await client.db('admin').command({ ping: 1 });
      } catch {
        failures++;
      }
      longest = Math.max(longest, performance.now() - start);
      await sleep(10);
    }
  })();
  return {
    take() {
      const value = longest;
      longest = 0;
      return value;
    },
    get failures() {
      return failures;
    },
    async stop() {
      running = false;
      await loop;
      await client.close();
    },
  };
}

async function seed(db) {
  const strings = db.collection('strings');
  for (let from = 0; from < STRINGS; from += 10_000) {
    await strings.insertMany(Array.from({ length: 10_000 }, (_, i) => ({ _id: from + i, s: 'x'.repeat(10 + ((from + i) % 12)) })), { ordered: false });
  }
  await db.collection('catastrophic').insertMany(Array.from({ length: CATASTROPHIC }, (_, i) => ({ _id: i, s: 'x'.repeat(30 + i) })));
}

const phases = [];
/** The share of a CPU the engine (`pid`) got since `since` ({ cpu, wall }). */
const shareSince = (pid, since) => Math.min(1, (cpuSeconds(pid) - since.cpu) / ((performance.now() - since.wall) / 1000));
const mark = (pid) => ({ cpu: cpuSeconds(pid), wall: performance.now() });

/** Records a phase: the bystander's longest ping, and the share of a CPU the engine had meanwhile. */
function phase(name, longest, detail, share) {
  const allowed = BOUND_MS / Math.max(share, 0.1) + SLACK_MS;
  phases.push({ name, longest, share });
  console.log(
    `${name}: ${detail}; bystander's longest ping ${longest.toFixed(0)} ms, the engine having ${(share * 100).toFixed(0)} % of a CPU (≈ ${(longest * share).toFixed(0)} ms of its time)`,
  );
  check(longest < allowed, `${name}: a ping waited ${longest.toFixed(0)} ms (bound ${BOUND_MS} ms at ${(share * 100).toFixed(0)} % of a CPU, + ${SLACK_MS} ms slack: ${allowed.toFixed(0)} ms)`);
}

async function main() {
  const engine = await startEngine();
  const client = await new MongoClient(`${engine.uri}/drill`).connect();
  const db = client.db();
  const seedStart = performance.now();
  await seed(db);
  console.log(`seeded ${STRINGS} strings and ${CATASTROPHIC} catastrophic ones in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
  const watcher = bystander(engine.uri);
  await sleep(500);
  watcher.take();
  try {
    // 1. maxTimeMS
    let since = mark(engine.pid);
    let start = performance.now();
    const timedOut = await db.collection('strings').find({ s: EVIL }).maxTimeMS(2000).toArray().then(() => null, (error) => error);
    let took = performance.now() - start;
    check(timedOut?.code === 50, `maxTimeMS 2000: expected MaxTimeMSExpired (50), got ${timedOut ? `${timedOut.code} ${timedOut.message}` : 'results'}`);
    check(took < 2000 + SLACK_MS, `maxTimeMS 2000: the command ended after ${took.toFixed(0)} ms`);
    phase('1. find, maxTimeMS 2000', watcher.take(), `${timedOut?.codeName ?? 'no error'} after ${took.toFixed(0)} ms`, shareSince(engine.pid, since));

    // 2. no maxTimeMS; the client gives up
    const leaving = await new MongoClient(`${engine.uri}/drill`, { socketTimeoutMS: GIVE_UP_MS, retryReads: false, maxPoolSize: 1 }).connect();
    start = performance.now();
    since = mark(engine.pid);
    const gaveUp = await leaving.db().collection('strings').find({ s: EVIL }).toArray().then(() => null, (error) => error);
    took = performance.now() - start;
    const cpuDuring = shareSince(engine.pid, since);
    const longestWhileScanning = watcher.take();
    await leaving.close();
    check(gaveUp !== null, 'the client without maxTimeMS got all its results within its timeout: the scan was not long');
    await sleep(1000);
    const cpuIdle = cpuSeconds(engine.pid);
    await sleep(2000);
    const cpuAfter = (cpuSeconds(engine.pid) - cpuIdle) / 2;
    check(cpuAfter < 0.25, `after the client left, the engine still used ${(cpuAfter * 100).toFixed(0)} % of a CPU: it kept scanning for nobody`);
    phase(
      '2. find, no maxTimeMS, client gives up after 10 s',
      longestWhileScanning,
      `the client gave up after ${took.toFixed(0)} ms (engine CPU ${(cpuDuring * 100).toFixed(0)} % meanwhile, ${(cpuAfter * 100).toFixed(0)} % once it had gone)`,
      cpuDuring,
    );
    watcher.take();

    // 3. catastrophic executions are abandoned
    since = mark(engine.pid);
    start = performance.now();
    const n = await db.collection('catastrophic').countDocuments({ s: EVIL });
    took = performance.now() - start;
    const cpu = (cpuSeconds(engine.pid) - since.cpu) * 1000;
    check(n === 0, `count over the catastrophic strings: expected 0, got ${n}`);
    // Per string at most: the turn the watchdog stops (slice + budget), then its trial alone (the budget), in CPU time.
    const expectedCpu = CATASTROPHIC * (BOUND_MS + 250);
    check(cpu < 1.5 * expectedCpu, `count over ${CATASTROPHIC} catastrophic strings took ${cpu.toFixed(0)} ms of CPU (expected about ${expectedCpu})`);
    phase('3. count, 20 catastrophic strings, no maxTimeMS', watcher.take(), `answered ${n} after ${took.toFixed(0)} ms, ${cpu.toFixed(0)} ms of CPU`, shareSince(engine.pid, since));

    // 4. in an aggregation expression, the abandoned execution fails the command
    since = mark(engine.pid);
    start = performance.now();
    const failed = await db
      .collection('catastrophic')
      .aggregate([{ $project: { hit: { $regexMatch: { input: '$s', regex: EVIL } } } }])
      .toArray()
      .then(() => null, (error) => error);
    took = performance.now() - start;
    check(failed?.code === 51156, `$regexMatch: expected 51156, got ${failed ? failed.code : 'results'}`);
    phase('4. $regexMatch over them', watcher.take(), `${failed?.code ?? 'no error'} after ${took.toFixed(0)} ms`, shareSince(engine.pid, since));
    check(watcher.failures === 0, `${watcher.failures} pings failed`);
  } finally {
    await watcher.stop();
    await client.close();
    await engine.stop();
  }
  const longest = Math.max(...phases.map((p) => p.longest));
  const longestOwn = Math.max(...phases.map((p) => p.longest * p.share));
  console.log(
    `\nEngine regex drill: bystander's longest ping ${longest.toFixed(0)} ms over all phases, ≈ ${longestOwn.toFixed(0)} ms of the engine's time (bound ${BOUND_MS} ms), ${violations.length} violations`,
  );
  if (violations.length) {
    for (const v of violations) console.log(`VIOLATION: ${v}`);
    process.exitCode = 1;
  } else console.log('Engine regex drill passed.');
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
