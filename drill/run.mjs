// npm run drill [-- crash bad-input load crafted-flows startup contact-merge-crash engine-crash engine-limits engine-regex]: runs the reliability
// drills (all of them by default), one after another, each as its own process holding /tmp/parley-load.lock (flock), so
// that no benchmark measures at the same time. The engine-* drills are the @parley/embedded-mongo package's (its drill/).
// Exits 1 if any drill found a violation or failed to run.
import { spawn, spawnSync } from 'node:child_process';
import { availableParallelism, cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { LOAD_LOCK as LOCK } from '../harness/pinning.mjs';

const engineDrills = new URL('drill/', import.meta.resolve('@parley/embedded-mongo/package.json'));
const DRILLS = {
  crash: new URL('crash.mjs', import.meta.url),
  'bad-input': new URL('bad-input.mjs', import.meta.url),
  load: new URL('load.mjs', import.meta.url),
  'crafted-flows': new URL('crafted-flows.mjs', import.meta.url),
  startup: new URL('startup.mjs', import.meta.url),
  'contact-merge-crash': new URL('contact-merge-crash.mjs', import.meta.url),
  ...Object.fromEntries(['engine-crash', 'engine-limits', 'engine-regex'].map((name) => [name, new URL(`${name}.mjs`, engineDrills)])),
};

const requested = process.argv.slice(2);
const unknown = requested.filter((name) => !(name in DRILLS));
if (unknown.length) {
  console.error(`Unknown drill ${unknown.join(', ')}; choose from ${Object.keys(DRILLS).join(', ')}`);
  process.exit(2);
}

let current;
for (const signal of ['SIGINT', 'SIGTERM']) {
  // The drill runs in a process group of its own (flock, node and the processes it starts): stop all of it.
  process.on(signal, () => {
    if (current) process.kill(-current.pid, signal);
    process.exitCode = 130;
  });
}

function runDrill(name) {
  if (spawnSync('flock', ['-n', LOCK, 'true']).status !== 0) console.log(`(waiting for ${LOCK}: a benchmark is running)`);
  const script = fileURLToPath(DRILLS[name]);
  current = spawn('flock', [LOCK, process.execPath, script], { stdio: 'inherit', detached: true });
  return new Promise((resolve) => current.once('exit', (code, signal) => resolve(signal ? 1 : code)));
}

const commit = spawnSync('git', ['describe', '--always', '--dirty'], { encoding: 'utf8' }).stdout.trim();
console.log(`Machine: ${availableParallelism()} CPUs (${cpus()[0]?.model}), Node.js ${process.version}; code: ${commit || 'unknown'}`);

const results = {};
for (const name of requested.length ? requested : Object.keys(DRILLS)) {
  console.log(`\n=== drill: ${name} ===`);
  results[name] = await runDrill(name);
  if (process.exitCode === 130) break;
}
console.log(`\n=== drills: ${Object.entries(results).map(([name, code]) => `${name} ${code === 0 ? 'passed' : 'FAILED'}`).join(', ')} ===`);
if (Object.values(results).some((code) => code !== 0)) process.exitCode = 1;
