// Start-up drill: `node dist/main.js` started DRILL_STARTS times (default 50) as `npm start` runs it (the embedded
// engine in the process, the demo seed on), two at a time, while busy processes keep every CPU loaded: each start
// must answer GET /health 200 within 60 s and exit 0 on SIGTERM. Half the starts are restarts on a data directory
// the previous start of its pair left (a supervisor's restart), half are in memory. A start that fails prints its
// output. Bounded: each start at most 60 s to come up and 20 s to stop. Exits 1 on any failure.
// Found by review: one start of 8aecf3d on a loaded machine died with
// "TypeError: Cannot set properties of undefined (setting 'Symbol(mongoose#schemaType)')".
// Run: npm run drill -- startup   (or node drill/startup.mjs after nest build)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopChild, waitForHttp200 } from '../harness/children.mjs';
import { JWT_SECRET } from './lib/processes.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const STARTS = Number(process.env.DRILL_STARTS ?? 50);
const IN_PARALLEL = 2;
const START_TIMEOUT_MS = 60_000;
const OUTPUT_TAIL_CHARS = 20_000;

/** Busy loops, one per CPU, for as long as the drill runs (and never longer than `seconds`). */
function loadEveryCpu(seconds) {
  const busy = `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`;
  return Array.from({ length: availableParallelism() }, () => spawn(process.execPath, ['-e', busy], { stdio: 'ignore' }));
}

/** Resolves once the child's output says it listens (`marker`); throws if it exits first or START_TIMEOUT_MS passes. */
async function listening(output, marker, exited) {
  let status;
  exited.then((value) => (status = { value }));
  for (const deadline = Date.now() + START_TIMEOUT_MS; !output().includes(marker); ) {
    if (status) throw new Error(`exited with ${status.value}`);
    if (Date.now() > deadline) throw new Error('timeout');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** One start: answers null when it came up and stopped cleanly, else what went wrong and its output. */
async function start(index, dataDir) {
  const port = await freePort();
  // LOG_LEVEL info: the "listening on" line tells this child's answers from those of whatever else took the port.
  const env = { PATH: process.env.PATH, NODE_ENV: 'development', LOG_LEVEL: 'info', PORT: String(port), JWT_SECRET, EMBEDDED_DATA_DIR: dataDir ?? 'memory' };
  const child = spawn(process.execPath, ['--max-semi-space-size=16', 'dist/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk) => (output = (output + chunk).slice(-OUTPUT_TAIL_CHARS));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  const started = Date.now();
  try {
    await listening(() => output, `localhost:${port} `, exited);
    await waitForHttp200(`http://127.0.0.1:${port}/health`, exited, START_TIMEOUT_MS);
  } catch (failure) {
    child.kill('SIGKILL');
    await exited;
    return { index, dataDir, reason: `did not come up (${failure.message}) after ${Date.now() - started} ms`, output };
  }
  const upMs = Date.now() - started;
  await stopChild(child, exited);
  const status = await exited;
  return status === 0 ? { index, upMs } : { index, dataDir, reason: `exited with ${status} on SIGTERM`, output };
}

/** Another process on the machine took the port between freePort and the child's listen: not the start's fault. */
const portTaken = (result) => Boolean(result.reason) && result.output.includes('EADDRINUSE');

async function retryOnAnotherPort(result) {
  console.log(`start ${result.index + 1}: its port was taken by another process; started again on another`);
  return start(result.index, result.dataDir);
}

async function main() {
  const deadline = STARTS * 40;
  const load = loadEveryCpu(deadline);
  const dataDirs = Array.from({ length: IN_PARALLEL }, () => mkdtempSync(join(tmpdir(), 'parley-drill-startup-')));
  const results = [];
  try {
    for (let next = 0; next < STARTS; next += IN_PARALLEL) {
      const batch = Array.from({ length: Math.min(IN_PARALLEL, STARTS - next) }, (_, lane) => {
        const index = next + lane;
        // Odd starts restart on the data directory the previous start of this lane left.
        return start(index, index % 2 === 1 ? dataDirs[lane] : null);
      });
      for (const result of await Promise.all(batch.map((first) => first.then((result) => (portTaken(result) ? retryOnAnotherPort(result) : result))))) {
        results.push(result);
        if (result.reason) console.log(`start ${result.index + 1}: ${result.reason}\n${result.output.slice(-6000)}\n`);
      }
    }
  } finally {
    for (const busy of load) busy.kill('SIGKILL');
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
  const failures = results.filter((result) => result.reason);
  const up = results.filter((result) => !result.reason).map((result) => result.upMs).sort((a, b) => a - b);
  console.log(`Start-up drill: ${results.length} starts of dist/main.js, ${IN_PARALLEL} at a time, ${availableParallelism()} CPUs kept busy`);
  console.log(`  up (GET /health 200)   median ${up[Math.floor(up.length / 2)] ?? '-'} ms, slowest ${up.at(-1) ?? '-'} ms`);
  console.log(`  failures               ${failures.length}`);
  if (failures.length) {
    process.exitCode = 1;
    console.log(`\nFAILED starts: ${failures.map((failure) => failure.index + 1).join(', ')}`);
  } else {
    console.log('\nStart-up drill passed.');
  }
}

await main();
