import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import type { Clock } from '../../src/lanes/clock.js';
import { listen } from './sse-client.js';
import { createTestApp, TEST_ENV, type TestApp } from './test-app.js';
import { waitFor } from './wait-for.js';

export interface Deployment {
  engine: EmbeddedMongo;
  apps: TestApp[];
  bases: string[];
  /** Another process on the same database, with its own settings. */
  add(env?: Record<string, string>): Promise<{ app: TestApp; base: string }>;
  /** A real process on the same database (spawnApi), killed at `stop()` if still running. */
  spawn(env?: Record<string, string>): Promise<ApiProcess>;
  stop(): Promise<void>;
}

/**
 * API processes on one embedded engine, as a deployment scales out: each its own app on the same database `database`,
 * listening, with `env` and, when given, one Clock they all measure deadlines by.
 */
export async function startDeployment(database: string, env: Record<string, string>, processes = 2, clock?: Clock): Promise<Deployment> {
  const engine = await startEmbeddedMongo();
  const apps: TestApp[] = [];
  const bases: string[] = [];
  const add = async (own: Record<string, string> = env) => {
    const app = await createTestApp({ env: { ...own, MONGODB_URI: `${engine.uri}${database}` }, clock });
    apps.push(app);
    bases.push(await listen(app.app));
    return { app, base: bases[bases.length - 1] };
  };
  const spawned: ApiProcess[] = [];
  const spawnOne = async (own: Record<string, string> = env) => {
    const child = await spawnApi(`${engine.uri}${database}`, own);
    spawned.push(child);
    return child;
  };
  for (let i = 0; i < processes; i++) await add();
  return {
    engine,
    apps,
    bases,
    add,
    spawn: spawnOne,
    stop: async () => {
      for (const child of spawned) await child.kill();
      for (const app of apps) await app.close();
      await engine.stop();
    },
  };
}

/** A real API process: `kill()` is a crash (SIGKILL, no shutdown hook runs), `stop()` a clean shutdown. */
export interface ApiProcess {
  base: string;
  pid: number;
  kill(): Promise<void>;
  stop(): Promise<void>;
  /** The last of what it printed, for a failure's message. */
  output(): string;
}

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
// About 9 s on an idle machine; a loaded one (a suite's other worker, a build) has taken over 60 s.
const STARTUP_TIMEOUT_MS = 150_000;
const OUTPUT_TAIL_CHARS = 4000;
const running = new Set<ChildProcess>();
process.once('exit', () => running.forEach((child) => child.kill('SIGKILL')));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * `src/main.ts` in a process of its own, compiled as it loads (@swc-node/register, decorator metadata included), on
 * `mongodbUri` with the test settings and `env`; resolves once its /health answers 200. Unlike `add()`, it can be
 * killed with `kill -9` in the middle of an operation, which is what crash tests need.
 */
export async function spawnApi(mongodbUri: string, env: Record<string, string> = {}): Promise<ApiProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=parley-source', '--import', '@swc-node/register/esm-register', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, ...TEST_ENV, LOG_LEVEL: 'warn', ...env, PORT: String(port), MONGODB_URI: mongodbUri },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let output = '';
  const keep = (chunk: string) => {
    output = (output + chunk).slice(-OUTPUT_TAIL_CHARS);
  };
  child.stdout!.setEncoding('utf8').on('data', keep);
  child.stderr!.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));
  const base = `http://127.0.0.1:${port}`;
  let gone = false;
  void exited.then(() => (gone = true));
  const started = waitFor(
    async () => {
      if (gone) throw new Error(`The API process exited while starting. Its last output:\n${output}`);
      return fetch(`${base}/health`).then(
        (response) => response.ok,
        () => false,
      );
    },
    { timeoutMs: STARTUP_TIMEOUT_MS, intervalMs: 200, message: `the API process on port ${port} to start` },
  );
  // One that did not come up must not go on writing to the test's database.
  await started.catch((failure: unknown) => {
    child.kill('SIGKILL');
    throw failure;
  });
  return {
    base,
    pid: child.pid!,
    output: () => output,
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
