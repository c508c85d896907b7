import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'undici';
import { freePort } from '../../harness/children.mjs';
import { loadRun, sequentialLatencies } from './load.mjs';
import { foreignLoad } from './machine.mjs';
import { requestOptions } from './scenarios.mjs';
import { PinnedServer } from './servers.mjs';

const BARE = {
  http: { name: 'bare node:http', script: 'bare-http.server.mjs' },
  nest: { name: 'bare NestJS-Express', script: 'bare-nest.server.mjs' },
  reads: { name: 'bare NestJS-Express + the reads', script: 'bare-reads.server.mjs' },
  writes: { name: 'bare NestJS-Express + the writes', script: 'bare-writes.server.mjs' },
};
/** The scenarios bare-reads.server.mjs knows the reads of. */
const READ_SCENARIOS = ['conversations', 'messages', 'inbox'];
/** The write routes whose commands capture-writes.mjs takes for bare-writes.server.mjs. */
export const WRITE_SCENARIOS = ['inbound', 'send'];
const WARMUP_SECONDS = 2;
const SCALE_BLOCKS = 5;
const SCALE_BLOCK_SIZE = 40;

/**
 * Interleaved rounds: in each, the app's scenarios (a scenario with its own `server` and `base` is measured
 * on that app, e.g. the one on a durable engine), then bare node:http and bare NestJS-Express on the
 * same core serving the app's answers, in an order that rotates per round, so that drift and noise on
 * the machine fall on all three alike. Each bare server lives for one round. Also in each round: each page of
 * `scale` (the conversations page, the inbox page) of a 1k and the 100k company, one request at a time, in
 * alternating blocks.
 * Before each round, the load from anyone else on the machine, which the report shows. With `reads` (the
 * database's URI, the company and the thread whose pages are measured, and `answers`, the app's pages now), also
 * the list pages' reads alone behind bare NestJS-Express (bare-reads.server.mjs), each measured right beside the
 * app's page, with the engine's CPU when it has its own process. With `writes` (the app's environment and the write
 * scenarios' requests), the same for the write routes: their database commands, captured from a real request of each
 * before the rounds (capture-writes.mjs), behind bare NestJS-Express (bare-writes.server.mjs).
 */
export async function runRounds({ app, engine, appBase, scenarios, bodies, rounds, duration, connections, scale, reads, writes, log }) {
  const bodiesFile = join(tmpdir(), `parley-bench-bodies-${process.pid}.json`);
  const currentFile = join(tmpdir(), `parley-bench-current-${process.pid}.json`);
  const capturedFile = join(tmpdir(), `parley-bench-captured-${process.pid}.json`);
  writeFileSync(bodiesFile, JSON.stringify(bodies));
  const runs = { app: {}, http: {}, nest: {}, reads: {}, writes: {} };
  const readBodies = reads ? Object.keys(bodies).filter((name) => READ_SCENARIOS.includes(name)) : [];
  const writeBodies = writes ? writes.requests.map((request) => request.name).filter((name) => name in bodies) : [];
  const captured = writeBodies.length ? captureWrites(writes, capturedFile, log) : null;
  const readsEnv = reads && {
    MONGODB_URI: reads.uri,
    READS_COMPANY: reads.companyId,
    READS_AGENT: reads.agentId,
    READS_THREAD: reads.threadId,
    READS_INBOX_COMPANY: reads.inboxCompanyId,
    READS_INBOX_AGENT: reads.inboxAgentId,
  };
  const push = (kind, name, run) => (runs[kind][name] ??= []).push(run);
  const scaleTimes = Object.fromEntries(scale.map((probe) => [probe.name, { small: [], large: [] }]));
  const otherLoad = [];
  const measure = (server, url, options) => loadRun({ server, url, connections, duration, ...options });

  log(`warming the app up (${WARMUP_SECONDS} s per scenario)`);
  for (const s of scenarios) await loadRun({ url: (s.base ?? appBase) + s.path, connections, duration: WARMUP_SECONDS, ...requestOptions(s) });

  try {
    for (let round = 0; round < rounds; round++) await runRound(round);
  } finally {
    rmSync(bodiesFile, { force: true });
    rmSync(currentFile, { force: true });
    rmSync(capturedFile, { force: true });
  }
  return { runs, scaleTimes, otherLoad: Math.max(...otherLoad), captured };

  async function runRound(round) {
    otherLoad.push(await foreignLoad());
    log(`round ${round + 1}: other load on the machine ${(100 * otherLoad.at(-1)).toFixed(0)}% of its CPU`);
    const order = ['app', 'http', 'nest'];
    for (let i = 0; i < round % order.length; i++) order.push(order.shift());
    for (const kind of order) {
      if (kind === 'app') {
        await appRound(round);
        continue;
      }
      await withBareServer(kind, Object.keys(bodies), async (server, base) => {
        for (const name of Object.keys(bodies)) {
          const run = await measure(server, `${base}/body/${name}`);
          log(`round ${round + 1} ${kind} ${name}: ${run.rps.toFixed(0)} req/s`);
          push(kind, name, run);
        }
      });
    }
  }

  /**
   * The app's scenarios, each page with a floor measured back to back with it (app first in odd rounds, floor first
   * in even ones): the machine's speed drifts over tens of seconds, and the ratio is only fair within the same ones.
   */
  async function appRound(round) {
    const measureApp = async (s) => {
      const run = await measure(s.server ?? app, (s.base ?? appBase) + s.path, { engine: s.server ? s.engine : engine, ...requestOptions(s) });
      log(`round ${round + 1} app ${s.name}: ${run.rps.toFixed(0)} req/s, p99 ${run.p99.toFixed(1)} ms`);
      push('app', s.name, run);
    };
    // The floor server of each scenario that has one (reads or writes), for this round.
    const floors = {};
    const measureAll = async () => {
      for (const s of scenarios) {
        const floor = s.server ? undefined : floors[s.name];
        if (!floor) {
          await measureApp(s);
          continue;
        }
        // Only the reads and writes touch the database, so only their runs count the engine's CPU.
        const measureFloor = async () => {
          const run = await measure(floor.server, `${floor.base}/body/${s.name}`, { engine });
          log(`round ${round + 1} ${floor.kind} ${s.name}: ${run.rps.toFixed(0)} req/s${run.errors ? `, ${run.errors} errors` : ''}`);
          push(floor.kind, s.name, run);
        };
        for (const step of round % 2 ? [measureFloor, () => measureApp(s)] : [() => measureApp(s), measureFloor]) await step();
      }
    };
    const withFloor = (kind, names, then) => async () => {
      if (names.length === 0) return then();
      await withBareServer(kind, names, async (server, base) => {
        for (const name of names) floors[name] = { kind, server, base };
        await then();
      });
    };
    if (readBodies.length) writeFileSync(currentFile, JSON.stringify(await settledAnswers(reads.answers, readBodies)));
    await withFloor('reads', readBodies, withFloor('writes', writeBodies, measureAll))();
    for (const probe of scale) await scaleProbe(appBase, probe, scaleTimes[probe.name]);
  }

  /** One of the bare servers (BARE) for the time of `use`, warmed up on each of `names` first. */
  async function withBareServer(kind, names, use) {
    const port = await freePort();
    const env = { PORT: String(port), ...(kind === 'reads' ? readsEnv : {}), ...(kind === 'writes' ? { MONGODB_URI: writes.env.MONGODB_URI } : {}) };
    const args = { reads: [bodiesFile, currentFile], writes: [bodiesFile, capturedFile] }[kind] ?? [bodiesFile];
    const server = new PinnedServer(BARE[kind].name, new URL(BARE[kind].script, import.meta.url).pathname, args, env);
    const base = `http://127.0.0.1:${port}`;
    try {
      await server.waitUntilServing(`${base}/ready`);
      for (const name of names) await measure(server, `${base}/body/${name}`, { duration: 1 });
      await use(server, base);
    } finally {
      await server.stop();
    }
  }
}

/**
 * The database commands of each write request (capture-writes.mjs: the built app in a child process, on the bench's
 * database, with the bench app's environment), written to `file` for bare-writes.server.mjs; answers, per route, the
 * commands' kinds and collections, and the shared work left out, for the report.
 */
function captureWrites({ env, requests }, file, log) {
  log(`capturing the database commands of ${requests.map((request) => request.name).join(' and ')} from real requests`);
  const requestsFile = `${file}.requests`;
  writeFileSync(requestsFile, JSON.stringify(requests));
  try {
    const script = new URL('capture-writes.mjs', import.meta.url).pathname;
    const run = spawnSync(process.execPath, [script, requestsFile, file], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`capture-writes failed (${run.status ?? run.signal}):\n${run.stderr}`);
  } finally {
    rmSync(requestsFile, { force: true });
  }
  const captured = JSON.parse(readFileSync(file, 'utf8'));
  return Object.fromEntries(
    Object.entries(captured).map(([name, { commands, shared }]) => [
      name,
      { commands: commands.map(({ name: kind, command }) => `${kind} ${command[kind]}`), shared },
    ]),
  );
}

/** The app's answers once two reads half a second apart agree: the reactions to the last writes have landed. */
async function settledAnswers(answers, names) {
  let last = await answers(names);
  for (let attempt = 0; attempt < 20; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = await answers(names);
    if (JSON.stringify(now) === JSON.stringify(last)) return now;
    last = now;
  }
  throw new Error(`the app's ${names.join(' and ')} pages kept changing: no steady answer to check the reads against`);
}

async function scaleProbe(appBase, scale, times) {
  const client = new Client(appBase);
  try {
    for (let block = 0; block < SCALE_BLOCKS; block++) {
      for (const size of block % 2 ? ['large', 'small'] : ['small', 'large']) {
        times[size].push(...(await sequentialLatencies(client, scale.path, scale[size], SCALE_BLOCK_SIZE)));
      }
    }
  } finally {
    await client.close();
  }
}
