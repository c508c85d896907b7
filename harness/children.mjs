// Child-process primitives the benchmarks (bench/lib/servers.mjs, bench/lib/app.mjs) and the reliability drills
// (drill/lib/processes.mjs) share: a free port, waiting for a server to answer, the engine's URI, stopping.
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The standalone engine's entry point, `dist/cli.js` of the @parley/embedded-mongo workspace package (once built). */
export const ENGINE_CLI = fileURLToPath(import.meta.resolve('@parley/embedded-mongo/cli'));

/** A TCP port nobody listens on right now on 127.0.0.1 (the OS picks it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Why a child did not start: the message is 'timeout' or 'exited with <status>'; `exited` and `status` say whether and how it ended. */
export class StartFailure extends Error {
  constructor(exited, status) {
    super(exited ? `exited with ${status}` : 'timeout');
    this.exited = exited;
    this.status = status;
  }
}

/** Follows the promise `exited` (resolved with the child's exit status): `state.exited`, `state.status`. */
function follow(exited) {
  const state = { exited: false, status: undefined };
  exited.then((status) => Object.assign(state, { exited: true, status }));
  return state;
}

async function answers200(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false; // not listening yet, or too slow to answer
  }
}

/**
 * Polls `url` every 100 ms until it answers 200; throws a StartFailure if the child exits first (`exited`
 * resolves) or `timeoutMs` passes.
 */
export async function waitForHttp200(url, exited, timeoutMs) {
  const child = follow(exited);
  const deadline = Date.now() + timeoutMs;
  while (!(await answers200(url))) {
    if (child.exited) throw new StartFailure(true, child.status);
    if (Date.now() > deadline) throw new StartFailure(false);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * The URI (without database, no trailing slash) of an engine started as `ENGINE_CLI --port 0`,
 * from the line it prints once it listens. `output()` answers what the child printed so far: it must be
 * kept by a 'data' listener on `child.stdout` registered before this call. Throws a StartFailure if the
 * child exits first or `timeoutMs` passes.
 */
export function engineUri(child, output, exited, timeoutMs) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new StartFailure(false)), timeoutMs);
    child.stdout.on('data', () => {
      const match = /connect with (mongodb:\/\/\S+)/.exec(output());
      if (match) {
        clearTimeout(timer);
        resolve(match[1].replace(/\/$/, ''));
      }
    });
    exited.then((status) => {
      clearTimeout(timer);
      reject(new StartFailure(true, status));
    });
  });
}

/** SIGTERM (the app drains and exits), SIGKILL if the child is still there after `graceMs`; resolves once `exited` does. */
export async function stopChild(child, exited, graceMs = 20_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
