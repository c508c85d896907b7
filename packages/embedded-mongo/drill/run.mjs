// npm run drill [-- engine-crash engine-limits engine-regex]: runs the engine's drills (all of them by default), one
// after another, each as its own process holding /tmp/parley-load.lock (flock), so that no benchmark or other drill
// on the machine measures at the same time. Exits 1 if any drill found a violation or failed to run.
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

/** The lock every load on this machine takes (the app's benchmarks and drills too). */
const LOCK = '/tmp/parley-load.lock';
const DRILLS = ['engine-crash', 'engine-limits', 'engine-regex'];

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !DRILLS.includes(name));
if (unknown.length) {
  console.error(`Unknown drill ${unknown.join(', ')}; choose from ${DRILLS.join(', ')}`);
  process.exit(2);
}

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  // The drill runs in a process group of its own (flock, node and the engine it starts): stop all of it.
  process.on(signal, () => {
    if (current) process.kill(-current.pid, signal);
    process.exitCode = 130;
  });
}

function runDrill(name) {
  if (spawnSync('flock', ['-n', LOCK, 'true']).status !== 0) console.log(`(waiting for ${LOCK}: a benchmark or drill is running)`);
  const script = fileURLToPath(new URL(`${name}.mjs`, import.meta.url));
  current = spawn('flock', [LOCK, process.execPath, script], { stdio: 'inherit', detached: true });
  return new Promise((resolve) => current.once('exit', (code, signal) => resolve(signal ? 1 : code)));
}

console.log(`Machine: ${availableParallelism()} CPUs (${cpus()[0]?.model}), Node.js ${process.version}`);
const results = {};
for (const name of requested.length ? requested : DRILLS) {
  console.log(`\n=== drill: ${name} ===`);
  results[name] = await runDrill(name);
  if (process.exitCode === 130) break;
}
console.log(`\n=== drills: ${Object.entries(results).map(([name, code]) => `${name} ${code === 0 ? 'passed' : 'FAILED'}`).join(', ')} ===`);
if (Object.values(results).some((code) => code !== 0)) process.exitCode = 1;
