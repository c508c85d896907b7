import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Module, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { SkipThrottle, ThrottlerStorage } from '@nestjs/throttler';
import request from 'supertest';
import { AppConfigModule } from '../../config/app-config.module.js';
import { DatabaseModule } from '../../database/database.module.js';
import { RateLimitGuard } from './rate-limit.guard.js';
import { RATE_LIMIT_STORAGE } from './rate-limit-storage.js';
import { RateLimitModule } from './rate-limit.module.js';
import { SharedWindowThrottlerStorage } from './shared-window-throttler.storage.js';

/** Stands in for the authentication guard: `x-test-agent` makes the caller that agent. */
class FakeAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest();
    const agentId = req.headers['x-test-agent'];
    if (agentId) req.user = { kind: 'agent', agentId, companyId: 'c1', role: 'agent' };
    return true;
  }
}

@Controller()
class TestController {
  @Get('things')
  things() {
    return { ok: true };
  }

  @SkipThrottle()
  @Get('health')
  health() {
    return { status: 'ok' };
  }
}

@Module({
  // An hour's window: the counts of one test never straddle two windows (they are aligned on the clock).
  imports: [AppConfigModule.forRoot({ NODE_ENV: 'test', THROTTLE_LIMIT: '2', THROTTLE_TTL_MS: '3600000' }), DatabaseModule, RateLimitModule],
  controllers: [TestController],
  providers: [
    { provide: APP_GUARD, useClass: FakeAuthGuard },
    { provide: APP_GUARD, useExisting: RateLimitGuard },
  ],
})
class TestAppModule {}

const RATE_LIMIT_HEADERS = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'ratelimit-policy', 'ratelimit'];

/** Every header of a response whose name speaks of rate limits or retrying (catches suffixed variants). */
function rateLimitHeaderNames(headers: Record<string, unknown>): string[] {
  return Object.keys(headers)
    .filter((name) => /ratelimit|retry-after/i.test(name))
    .sort();
}

describe('RateLimitModule in an application', () => {
  let app: INestApplication;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [TestAppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
  });

  it('serves its shared storage under the library\'s ThrottlerStorage token', () => {
    const storage = app.get(ThrottlerStorage);
    expect(storage).toBeInstanceOf(SharedWindowThrottlerStorage);
    expect(app.get(RATE_LIMIT_STORAGE)).toBe(storage);
  });

  it('limits per agent with the configured limit and window, headers on every response', async () => {
    const first = await request(app.getHttpServer()).get('/things').set('x-test-agent', 'a1').expect(200);
    expect(rateLimitHeaderNames(first.headers)).toEqual([...RATE_LIMIT_HEADERS].sort());
    const reset = Number(first.headers['x-ratelimit-reset']);
    expect(reset).toBeGreaterThan(0);
    expect(reset).toBeLessThanOrEqual(3600);
    expect(first.headers).toMatchObject({
      'x-ratelimit-limit': '2',
      'x-ratelimit-remaining': '1',
      'ratelimit-policy': '"default";q=2;w=3600',
      ratelimit: `"default";r=1;t=${reset}`,
    });
    await request(app.getHttpServer()).get('/things').set('x-test-agent', 'a1').expect(200);

    const refused = await request(app.getHttpServer()).get('/things').set('x-test-agent', 'a1').expect(429);
    expect(rateLimitHeaderNames(refused.headers)).toEqual([...RATE_LIMIT_HEADERS, 'retry-after'].sort());
    const retryAfter = refused.headers['retry-after'];
    expect(Number(retryAfter)).toBeLessThanOrEqual(reset);
    expect(refused.headers).toMatchObject({ 'x-ratelimit-remaining': '0', ratelimit: `"default";r=0;t=${retryAfter}` });
    expect(refused.body).toEqual({ statusCode: 429, message: `Too many requests, retry after ${retryAfter} seconds` });

    // another agent and an anonymous caller have their own counts
    await request(app.getHttpServer()).get('/things').set('x-test-agent', 'a2').expect(200);
    const anonymous = await request(app.getHttpServer()).get('/things').expect(200);
    expect(anonymous.headers['x-ratelimit-remaining']).toBe('1');
  });

  it('does not count or decorate @SkipThrottle() routes', async () => {
    for (let i = 0; i < 4; i++) {
      const res = await request(app.getHttpServer()).get('/health').set('x-test-agent', 'a3').expect(200);
      expect(rateLimitHeaderNames(res.headers)).toEqual([]);
    }
    const things = await request(app.getHttpServer()).get('/things').set('x-test-agent', 'a3').expect(200);
    expect(things.headers['x-ratelimit-remaining']).toBe('1');
  });
});
