import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { ENGINE_CLI, engineUri, freePort } from '../../harness/children.mjs';
import { PinnedServer } from './servers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The database name the app gives the embedded engine (src/database/database-target.ts). */
const EMBEDDED_DATABASE = 'parley';

/**
 * The engine process holds the whole database in its heap: the full layout's 1 000 000 seeded messages and the load's
 * writes outgrow V8's default limit (4 GiB) during the fan-out, so it gets 12 GiB of the bench machine's memory.
 */
const ENGINE_NODE_FLAGS = ['--max-old-space-size=12288'];

/**
 * The embedded engine as its own process (ENGINE_CLI) on the servers' core, as the
 * drills and a multi-process deployment run it: the app's RSS is then the app's alone. In memory, or on
 * `dataDir` (every write then waits for its journal fsync).
 */
async function startEngineProcess(dataDir, nodeArgs, cpu) {
  const args = ['--host', '127.0.0.1', '--port', '0', ...(dataDir ? ['--data-dir', dataDir] : [])];
  // The given flags after ours: V8 takes the last value of a flag given twice.
  const engine = new PinnedServer('engine', ENGINE_CLI, args, {}, { cwd: ROOT, nodeArgs: [...ENGINE_NODE_FLAGS, ...nodeArgs], cpu });
  try {
    const uri = await engineUri(engine.child, () => engine.output, engine.exited, 30_000);
    return { engine, uri: `${uri}/${EMBEDDED_DATABASE}` };
  } catch (failure) {
    await engine.stop();
    throw new Error(`the engine did not start: ${failure.message}\n${engine.output}`);
  }
}

/** The Node.js flags the app runs with in production (the Dockerfile's NODE_OPTIONS) and under `npm start`. */
export const APP_NODE_FLAGS = ['--max-semi-space-size=16'];
/** The allocator's settings the Dockerfile gives the app in production (glibc reads them when the process starts). */
export const APP_ALLOCATOR_ENV = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '65536' };

/**
 * The built app (dist/main.js) on the servers' core, as in production but for: no request log, no demo
 * company, a rate limit the load never reaches (the limiter still counts every request), and webhooks
 * allowed to 127.0.0.1 (the fan-out's receivers). The database: MONGODB_URI when set, else the embedded
 * engine, in the app's process or (`engineProcess`) in its own, in memory or on `dataDir`. `env` adds or overrides
 * variables (the feed's bench raises EVENT_STREAMS_PER_COMPANY); `engineNodeArgs` are the engine process's Node.js flags,
 * `engineCpu` its core (the app's by default).
 */
export async function startApp({ nodeArgs = [], engineProcess = false, engineNodeArgs = [], engineCpu, dataDir, env: extraEnv = {} } = {}) {
  const separate = !process.env.MONGODB_URI && engineProcess ? await startEngineProcess(dataDir, engineNodeArgs, engineCpu) : null;
  const port = await freePort();
  const env = {
    PORT: String(port),
    LOG_LEVEL: 'silent',
    DEMO_SEED: 'false',
    JWT_SECRET: randomBytes(48).toString('base64'),
    THROTTLE_LIMIT: '1000000000',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    EMBEDDED_DATA_DIR: dataDir ?? 'memory',
    ...APP_ALLOCATOR_ENV,
    ...(separate ? { MONGODB_URI: separate.uri } : {}),
    ...extraEnv,
  };
  // The given flags after the production ones: V8 takes the last value of a flag given twice.
  const app = new PinnedServer('app', 'dist/main.js', [], env, { cwd: ROOT, nodeArgs: [...APP_NODE_FLAGS, ...nodeArgs] });
  const base = `http://127.0.0.1:${port}`;
  try {
    await app.waitUntilServing(`${base}/health`);
  } catch (error) {
    await Promise.all([app.stop(), separate?.engine.stop()]);
    throw error;
  }
  const databaseUri = process.env.MONGODB_URI || separate?.uri || embeddedUri(app, port);
  // `env`: what a second instance of the app on the same database needs to accept the same tokens (capture-writes.mjs).
  return { app, engine: separate?.engine, base, databaseUri, env: { ...env, MONGODB_URI: databaseUri } };
}

/** The in-process engine listens on the app's one other port (the app logs it only at warn level). */
function embeddedUri(app, appPort) {
  const ports = app.listeningPorts().filter((port) => port !== appPort);
  if (ports.length !== 1) throw new Error(`expected the embedded engine's port among ${ports}, found ${ports.length}`);
  return `mongodb://127.0.0.1:${ports[0]}/${EMBEDDED_DATABASE}`;
}
