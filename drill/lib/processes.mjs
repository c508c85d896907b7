// The drills' child processes: the standalone engine and API processes built in dist/, on 127.0.0.1 only.
// Every child is registered here and killed when the drill ends, fails or is interrupted.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ENGINE_CLI, engineUri, freePort, stopChild, waitForHttp200 } from '../../harness/children.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STARTUP_TIMEOUT_MS = 30_000;
/** Output kept per child, printed when it fails to start. */
const OUTPUT_TAIL_CHARS = 4000;

export const JWT_SECRET = 'drill-secret-that-is-long-enough-for-production';

/** Settings every drill API process shares; a drill adds its own on top. */
export const API_ENV = {
  NODE_ENV: 'development',
  LOG_LEVEL: 'warn',
  DEMO_SEED: 'false',
  JWT_SECRET,
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_TIMEOUT_MS: '2000',
  // The drills are not about rate limits (the bad-input drill checks them on processes of its own).
  THROTTLE_LIMIT: '100000000',
  AUTH_FAILURE_LIMIT: '100000000',
};

const children = new Set();

function killAll() {
  for (const child of children) child.kill('SIGKILL');
}

process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the drill's processes`);
    killAll();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

function track(name, args, env) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk) => {
    output = (output + chunk).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  children.add(child);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  exited.then(() => children.delete(child));
  return { name, child, exited, output: () => output };
}

/** What a started child offers: its exit, its output, `kill()` (SIGKILL: a crash) and `stop()` (SIGTERM: a clean shutdown). */
function controls(tracked) {
  return {
    exited: tracked.exited,
    output: tracked.output,
    kill: async () => {
      tracked.child.kill('SIGKILL');
      await tracked.exited;
    },
    stop: () => stopChild(tracked.child, tracked.exited),
  };
}

function startupFailure(tracked, reason) {
  tracked.child.kill('SIGKILL');
  return new Error(`${tracked.name} did not start (${reason}). Its last output:\n${tracked.output()}`);
}

/**
 * The engine's CLI (ENGINE_CLI) on `port` (default: an ephemeral one), in memory or on `dataDir`, with `args`
 * added; answers its URI (without database), its pid and its controls.
 */
export async function startEngine({ dataDir, port = 0, args = [] } = {}) {
  const flags = ['--host', '127.0.0.1', '--port', String(port), ...(dataDir ? ['--data-dir', dataDir] : []), ...args];
  const tracked = track('engine', [ENGINE_CLI, ...flags], {});
  let uri;
  try {
    uri = await engineUri(tracked.child, tracked.output, tracked.exited, STARTUP_TIMEOUT_MS);
  } catch (failure) {
    throw startupFailure(tracked, failure.message);
  }
  return { uri, pid: tracked.child.pid, ...controls(tracked) };
}

/** `node dist/main.js` on `port` with `env` over API_ENV, resolved once /health answers 200; answers its base URL, pid and controls. */
export async function startApi({ port, mongodbUri, env = {} }) {
  const tracked = track(`API on port ${port}`, ['dist/main.js'], { ...API_ENV, ...env, PORT: String(port), MONGODB_URI: mongodbUri });
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp200(`${baseUrl}/health`, tracked.exited, STARTUP_TIMEOUT_MS);
  } catch (failure) {
    throw startupFailure(tracked, failure.message);
  }
  return { baseUrl, pid: tracked.child.pid, ...controls(tracked) };
}

/** The engine and one API process on it, with the database `name`; `stop()` ends both. */
export async function startStack(name, env = {}) {
  const engine = await startEngine();
  const mongodbUri = `${engine.uri}/${name}`;
  const port = await freePort();
  const api = await startApi({ port, mongodbUri, env });
  return {
    engine,
    api,
    mongodbUri,
    port,
    stop: async () => {
      await api.stop();
      await engine.stop();
    },
  };
}
