import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { freePort, PinnedServer } from './servers.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** The database name the app gives the embedded engine (src/database/database-target.ts). */
const EMBEDDED_DATABASE = 'parley';

/**
 * The built app (dist/main.js) on the servers' core, as in production but for: no request log, no demo
 * company, a rate limit the load never reaches (the limiter still counts every request), and webhooks
 * allowed to 127.0.0.1 (the fan-out's receivers). MONGODB_URI is passed through when set.
 */
export async function startApp({ nodeArgs = [] } = {}) {
  const port = await freePort();
  const env = {
    PORT: String(port),
    LOG_LEVEL: 'silent',
    DEMO_SEED: 'false',
    JWT_SECRET: randomBytes(48).toString('base64'),
    THROTTLE_LIMIT: '1000000000',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  };
  const app = new PinnedServer('app', 'dist/main.js', [], env, { cwd: ROOT, nodeArgs });
  const base = `http://127.0.0.1:${port}`;
  await app.waitUntilServing(`${base}/health`);
  return { app, base, databaseUri: process.env.MONGODB_URI || embeddedUri(app, port) };
}

/** The in-process engine listens on the app's one other port (the app logs it only at warn level). */
function embeddedUri(app, appPort) {
  const ports = app.listeningPorts().filter((port) => port !== appPort);
  if (ports.length !== 1) throw new Error(`expected the embedded engine's port among ${ports}, found ${ports.length}`);
  return `mongodb://127.0.0.1:${ports[0]}/${EMBEDDED_DATABASE}`;
}

export { ROOT };
