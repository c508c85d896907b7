import type { INestApplication, Type } from '@nestjs/common';
import { getModelToken } from '@nestjs/mongoose';
import { Test } from '@nestjs/testing';
import type { Model } from 'mongoose';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent.js';
import { AppModule } from '../../src/app.module.js';
import { configureApp } from '../../src/app.setup.js';
import { Clock } from '../../src/lanes/clock.js';
import { trackApp } from './open-apps.js';
import { OpenApiResponseValidator, type ResponseMismatch } from './openapi-responses.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-production-use';
/** A WEBHOOK_SECRET_KEYS entry for tests that run as production (32 bytes of base64). */
export const TEST_WEBHOOK_SECRET_KEYS = `k1:${Buffer.alloc(32, 7).toString('base64')}`;

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  DEMO_SEED: 'false',
  JWT_SECRET: TEST_JWT_SECRET,
  // scrypt at N = 2^17 costs ~0.3 s per hash: suites that log many agents in use 2^12; the rehash test sets the real cost.
  PASSWORD_SCRYPT_LOG_N: '12',
  // Every test app gets a fresh, empty engine of its own.
  EMBEDDED_DATA_DIR: 'memory',
};

export interface TestApp {
  app: INestApplication;
  http: TestAgent;
  model<T>(name: string): Model<T>;
  close(): Promise<void>;
}

/**
 * Boots the real application over HTTP on its own embedded engine (MONGODB_URI is unset), with the
 * same setup as main.ts. `controllers` adds test-only routes, e.g. to exercise a guard; `imports`
 * adds modules next to the app, as an extension does (examples/); `clock` replaces the app's Clock (a TestClock
 * moves deadlines' time forward without waiting).
 */
export function createTestApp(
  options: { env?: Record<string, string>; controllers?: Type<unknown>[]; imports?: Type<unknown>[]; clock?: Clock } = {},
): Promise<TestApp> {
  return trackApp(startTestApp(options));
}

async function startTestApp(options: Parameters<typeof createTestApp>[0] = {}): Promise<TestApp> {
  const builder = Test.createTestingModule({
    imports: [AppModule.forRoot({ ...TEST_ENV, ...options.env }), ...(options.imports ?? [])],
    controllers: options.controllers ?? [],
  });
  if (options.clock) builder.overrideProvider(Clock).useValue(options.clock);
  const moduleRef = await builder.compile();
  const app = moduleRef.createNestApplication({ bodyParser: false, logger: false });
  configureApp(app);
  try {
    await app.init();
  } catch (error) {
    // Whatever started before the failure (the embedded engine) stops with it.
    await app.close().catch(() => undefined);
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    app,
    http: checkedAgainstDocument(app, request(app.getHttpServer()), !options.controllers?.length && !options.imports?.length),
    model: <T>(name: string) => app.get<Model<T>>(getModelToken(name)),
    close: () => (closing ??= app.close()),
  };
}

/** The document's validator, built from the first app of the test file (the routes are the same in every app). */
let validator: OpenApiResponseValidator | undefined;
const mismatches: ResponseMismatch[] = [];

/** Every answer a test received through `TestApp.http` that the OpenAPI document does not describe. */
export function responseMismatches(): readonly ResponseMismatch[] {
  return mismatches;
}

const HTTP_METHODS = new Set(['get', 'post', 'put', 'patch', 'delete']);

/**
 * Checks every answer a test receives against the OpenAPI document (test/support/openapi-responses.ts): a new route is
 * covered by the tests it already has. Mismatches are collected and fail the file (close-open-apps.setup.ts), so a
 * test's own assertions still report first.
 */
function checkedAgainstDocument(app: INestApplication, agent: TestAgent, plain: boolean): TestAgent {
  return new Proxy(agent, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof property !== 'string' || !HTTP_METHODS.has(property) || typeof value !== 'function') return value;
      return (url: string, ...rest: unknown[]) => {
        const test = (value as (url: string, ...rest: unknown[]) => request.Test).call(target, url, ...rest);
        test.on('response', (response: request.Response) => {
          validator ??= OpenApiResponseValidator.forApp(app, plain);
          const found = validator.check(property, url, response.status, response.headers['content-type'], response.body);
          if (found) mismatches.push(...found);
        });
        return test;
      };
    },
  });
}
