import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type BeforeApplicationShutdown } from '@nestjs/common';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** Holds the application's shutdown open until the test lets it go, as in-flight webhook attempts would. */
let releaseShutdown: () => void = () => undefined;
let shutdownReached: () => void = () => undefined;
const reached = new Promise<void>((resolve) => (shutdownReached = resolve));

@Injectable()
class SlowToStop implements BeforeApplicationShutdown {
  beforeApplicationShutdown(): Promise<void> {
    shutdownReached();
    return new Promise((resolve) => (releaseShutdown = resolve));
  }
}

@Module({ providers: [SlowToStop] })
class SlowToStopModule {}

describe('GET /health/live and /health/ready', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ imports: [SlowToStopModule] });
  });
  afterAll(() => {
    releaseShutdown();
    return t.close();
  });

  it('answers liveness without authentication or rate-limit headers', async () => {
    const response = await t.http.get('/health/live').expect(200);
    expect(response.body).toEqual({ status: 'ok' });
    expect(response.headers).not.toHaveProperty('x-ratelimit-limit');
  });

  it('is ready with the database up and the relay and lanes running; /health is unchanged', async () => {
    const response = await t.http.get('/health/ready').expect(200);
    expect(response.body).toEqual({ status: 'ready', database: 'up', relay: 'running', lanes: 'running', shuttingDown: false });
    expect((await t.http.get('/health').expect(200)).body).toEqual({ status: 'ok', database: 'up' });
  });

  it('answers 503 from the moment shutdown begins, while in-flight work finishes, and stays live', async () => {
    const closing = t.close();
    await reached;
    const response = await t.http.get('/health/ready').expect(503);
    // The relay and the lanes may still be draining (their hooks run in module order); readiness is refused already.
    expect(response.body).toMatchObject({ status: 'unavailable', database: 'up', shuttingDown: true });
    await t.http.get('/health/live').expect(200);
    releaseShutdown();
    await closing;
  });
});
