import 'reflect-metadata';
import { Logger as NestLogger, type DynamicModule, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { Logger } from 'nestjs-pino';
import { configureApp } from './app.setup.js';
import { AppConfig } from './config/app-config.js';
import { ConfigurationError, ConfigurationErrors } from './config/environment.js';
import { loadEnvFile } from './config/env-file.js';
import { applyHeapGrowth } from './config/heap-growth.js';
import { API_VERSION } from './swagger.js';
import { DemoSeedService, type DemoCredentials } from './seed/demo-seed.service.js';

/** How long SIGTERM waits for in-flight work before the process exits anyway. */
const SHUTDOWN_GRACE_MS = 15_000;

function printDemoCredentials(credentials: DemoCredentials, baseUrl: string): void {
  const kept = `at the first start on ${credentials.dataDir}`;
  const storage = credentials.dataDir
    ? `embedded database in ${credentials.dataDir}, kept across restarts`
    : 'embedded in-memory database, data lives only as long as this process';
  // Printed on purpose (contract section 1), to the terminal and never through the request logger.
  process.stdout.write(
    [
      '',
      `Demo company ${credentials.existing ? 'from an earlier start' : 'ready'} (${storage}):`,
      `  Authorization: Bearer ${credentials.accessToken}`,
      `    (expires ${credentials.accessTokenExpiresAt.toISOString()}; then log in again with the admin below)`,
      `  x-api-key: ${credentials.apiKey ?? `the demo key printed ${kept} (stored only as a hash; create another with POST /v1/api-keys)`}`,
      `  Admin login: ${credentials.email} / ${credentials.password ?? `the password printed ${kept}`}`,
      `  Swagger UI: ${baseUrl}/docs`,
      '',
    ].join('\n') + '\n',
  );
}

function handleShutdownSignals(app: INestApplication, afterClose: () => Promise<void>): void {
  const logger = new NestLogger('Shutdown');
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal} received: finishing in-flight work`);
    setTimeout(() => {
      logger.error(`Still busy after ${SHUTDOWN_GRACE_MS} ms: exiting`);
      process.exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    app.close().then(afterClose).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error(error);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/**
 * Starts Parley as `npm start` runs it: the module `rootModule` builds from the environment (`AppModule.forRoot`, or
 * a module importing it next to extensions, as examples/main.ts does), the same setup as the tests, SIGTERM
 * handling, and the demo company's credentials printed on an empty embedded database.
 */
export async function serve(rootModule: (env: NodeJS.ProcessEnv) => DynamicModule): Promise<void> {
  let appModule;
  try {
    loadEnvFile(process.env);
    appModule = rootModule(process.env);
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    // One line per bad variable, every one of them: a deployment learns all it must fix from one run.
    const problems = error instanceof ConfigurationErrors ? error.problems : [error.message];
    process.stderr.write(problems.map((problem) => `Configuration error: ${problem}\n`).join(''));
    process.exit(1);
  }

  const app = await NestFactory.create(appModule, { bufferLogs: true, bodyParser: false });
  app.useLogger(app.get(Logger));
  let afterClose: () => Promise<void> = () => Promise.resolve();
  configureApp(app);
  handleShutdownSignals(app, () => afterClose());

  const config = app.get(AppConfig);
  // After the app's own shutdown, so that the spans of the work it finishes are exported too.
  // Loaded only when tracing is on: the SDK and its exporter hold ~17 MiB of a process that does not use them.
  if (config.otlpEndpoint !== undefined) afterClose = (await import('./tracing/tracing-sdk.js')).startTracing(API_VERSION);
  applyHeapGrowth(config.heapGrowthPercent);
  if (config.jwtSecretFile) {
    new NestLogger('Auth').warn(
      `JWT_SECRET is not set: using the development secret kept in ${config.jwtSecretFile} (readable only by its owner; ` +
        'made on the first start, kept across restarts). Set JWT_SECRET in production',
    );
  } else if (config.jwtSecretGenerated) {
    new NestLogger('Auth').warn('JWT_SECRET is not set: using a random secret, so tokens end with this process');
  }
  await app.listen(config.port);
  // The port the server got (PORT=0 asks the system for a free one).
  const baseUrl = `http://localhost:${(app.getHttpServer().address() as AddressInfo).port}`;
  new NestLogger('Bootstrap').log(`Parley listening on ${baseUrl} (API docs at ${baseUrl}/docs)`);

  const credentials = await app.get(DemoSeedService).seed();
  if (credentials) printDemoCredentials(credentials, baseUrl);
}

