import { spawnSync } from 'node:child_process';

/** The lock every load on this machine takes (the reliability drills use it too): one load at a time. */
export const LOAD_LOCK = '/tmp/parley-load.lock';
/** The core of the servers under test; the load generator runs on the other one. */
export const SERVER_CPU = '0';
export const LOAD_CPU = '1';

const PINNED_ENV = 'PARLEY_BENCH_PINNED';

/**
 * Runs the calling script again under `flock` and `taskset -c 1`, then exits with its status, unless
 * this already is that run. The servers measured get core 0 (see servers.mjs), so the load generator
 * never competes with them for a core, and another engineer's load never overlaps ours.
 */
export function rerunPinnedUnderLock(script) {
  if (process.env[PINNED_ENV] === '1') return;
  const command = ['taskset', '-c', LOAD_CPU, process.execPath, ...process.execArgv, script, ...process.argv.slice(2)];
  process.stderr.write(`Waiting for ${LOAD_LOCK}, then running the load generator on CPU ${LOAD_CPU}\n`);
  const run = spawnSync('flock', [LOAD_LOCK, ...command], { stdio: 'inherit', env: { ...process.env, [PINNED_ENV]: '1' } });
  if (run.error) throw run.error;
  process.exit(run.status ?? 1);
}
