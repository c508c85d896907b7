import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import type { Clock } from '../../src/lanes/clock.js';
import { listen } from './sse-client.js';
import { createTestApp, type TestApp } from './test-app.js';

export interface Deployment {
  engine: EmbeddedMongo;
  apps: TestApp[];
  bases: string[];
  /** Another process on the same database, with its own settings. */
  add(env?: Record<string, string>): Promise<{ app: TestApp; base: string }>;
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
  for (let i = 0; i < processes; i++) await add();
  return {
    engine,
    apps,
    bases,
    add,
    stop: async () => {
      for (const app of apps) await app.close();
      await engine.stop();
    },
  };
}
