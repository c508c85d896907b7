import { beforeEach, describe, expect, it } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { SkipThrottle, Throttle, ThrottlerException, type ThrottlerModuleOptions } from '@nestjs/throttler';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import { RateLimitGuard, rateLimitTracker, RateLimitWeight, type TrackedRequest } from './rate-limit.guard.js';
import { CachedReflector } from '../route-metadata.js';
import { SharedWindowThrottlerStorage } from './shared-window-throttler.storage.js';

const agent = (agentId: string, companyId = 'c1'): AuthPrincipal => ({ kind: 'agent', agentId, companyId, role: 'agent' });
const apiKey = (apiKeyId: string): AuthPrincipal => ({
  kind: 'api-key',
  apiKeyId,
  companyId: 'c1',
  scopes: ['messages:write'],
  channels: null,
});

describe('rateLimitTracker', () => {
  it('counts an agent by its id', () => {
    expect(rateLimitTracker({ user: agent('a1'), ip: '203.0.113.9' })).toBe('agent:a1');
  });

  it('counts an API key by its id', () => {
    expect(rateLimitTracker({ user: apiKey('k1'), ip: '203.0.113.9' })).toBe('key:k1');
  });

  it('falls back to the client address when nobody is authenticated', () => {
    expect(rateLimitTracker({ ip: '203.0.113.9' })).toBe('ip:203.0.113.9');
    expect(rateLimitTracker({ user: null, ip: '::ffff:203.0.113.9' })).toBe('ip:203.0.113.9');
    expect(rateLimitTracker({ user: { foo: 1 } as unknown as AuthPrincipal, ip: '203.0.113.9' })).toBe(
      'ip:203.0.113.9',
    );
    expect(rateLimitTracker({})).toBe('ip:unknown');
  });

  it('groups IPv6 clients by their /64', () => {
    expect(rateLimitTracker({ ip: '2001:db8:1:2:aaaa::1' })).toBe('ip:2001:db8:1:2::/64');
    expect(rateLimitTracker({ ip: '2001:db8:1:2:bbbb::2' })).toBe('ip:2001:db8:1:2::/64');
  });
});

class ThingsController {
  list(): void {}
  create(): void {}
  @RateLimitWeight(2)
  report(): void {}
  @RateLimitWeight(50)
  huge(): void {}
  @Throttle({ default: { limit: 1, ttl: 10_000 } })
  strict(): void {}
  @Throttle({ default: { limit: (context: ExecutionContext) => (context.switchToHttp().getRequest<{ ip?: string }>().ip === '203.0.113.9' ? 3 : 1), ttl: 60_000 } })
  perAddress(): void {}
}

class HealthController {
  @SkipThrottle()
  check(): void {}
}

@SkipThrottle()
class DocsController {
  json(): void {}
}

/** A response that records every header set on it, in order, names exactly as given. */
class FakeResponse {
  readonly set: Array<[string, string]> = [];
  setHeader(name: string, value: string | number): void {
    this.set.push([name, String(value)]);
  }
  get headers(): Record<string, string> {
    return Object.fromEntries(this.set);
  }
}

function httpContext(
  req: TrackedRequest & { headers?: Record<string, string> },
  res: FakeResponse,
  controller: Function = ThingsController,
  handler: Function = ThingsController.prototype.list,
): ExecutionContext {
  const request = { headers: {}, ...req };
  return {
    getType: () => 'http',
    getClass: () => controller,
    getHandler: () => handler,
    getArgs: () => [request, res],
    getArgByIndex: (index: number) => [request, res][index],
    switchToHttp: () => ({ getRequest: () => request, getResponse: () => res, getNext: () => undefined }),
  } as unknown as ExecutionContext;
}

describe('RateLimitGuard', () => {
  const LIMIT = 2;
  const COMPANY_LIMIT = 5;
  const TTL = 60_000;
  let clock: { now: number };
  let storage: SharedWindowThrottlerStorage;
  let guard: RateLimitGuard;

  beforeEach(async () => {
    // Windows are aligned on the clock: start at the beginning of one.
    clock = { now: 84 * TTL };
    storage = new SharedWindowThrottlerStorage({ now: () => clock.now });
    const options: ThrottlerModuleOptions = {
      throttlers: [
        { name: 'default', limit: LIMIT, ttl: TTL },
        { name: 'company', limit: COMPANY_LIMIT, ttl: TTL },
      ],
      storage,
    };
    guard = new RateLimitGuard(options, storage, new CachedReflector());
    await guard.onModuleInit();
  });

  async function hit(req: TrackedRequest & { headers?: Record<string, string> }, controller?: Function, handler?: Function) {
    const res = new FakeResponse();
    try {
      const allowed = await guard.canActivate(httpContext(req, res, controller, handler));
      return { allowed, res, error: undefined };
    } catch (error) {
      return { allowed: false, res, error };
    }
  }

  it('sets exactly the rate-limit headers on an allowed response', async () => {
    const { allowed, res } = await hit({ user: agent('a1') });
    expect(allowed).toBe(true);
    expect(res.set).toEqual([
      ['X-RateLimit-Limit', '2'],
      ['X-RateLimit-Remaining', '1'],
      ['X-RateLimit-Reset', '60'],
      ['RateLimit-Policy', '"default";q=2;w=60'],
      ['RateLimit', '"default";r=1;t=60'],
    ]);
  });

  it('reports the seconds left in the window as it passes', async () => {
    await hit({ user: agent('a1') });
    clock.now += 45_200;
    const { res } = await hit({ user: agent('a1') });
    expect(res.headers).toMatchObject({ 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '15', RateLimit: '"default";r=0;t=15' });
  });

  it('refuses past the limit with ThrottlerException (429), Retry-After and the headers already on the response', async () => {
    await hit({ user: agent('a1') });
    await hit({ user: agent('a1') });
    clock.now += 1_000;
    const { allowed, res, error } = await hit({ user: agent('a1') });
    expect(allowed).toBe(false);
    expect(error).toBeInstanceOf(ThrottlerException);
    expect((error as ThrottlerException).getStatus()).toBe(429);
    expect((error as ThrottlerException).message).toBe('Too many requests, retry after 59 seconds');
    // the block lasts until the window ends, which every process agrees on
    expect(res.set).toEqual([
      ['X-RateLimit-Limit', '2'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '59'],
      ['RateLimit-Policy', '"default";q=2;w=60'],
      ['RateLimit', '"default";r=0;t=59'],
      ['Retry-After', '59'],
    ]);
    clock.now += 58_000;
    const later = await hit({ user: agent('a1') });
    expect(later.error).toBeInstanceOf(ThrottlerException);
    expect(later.res.headers['Retry-After']).toBe('1');
    expect((later.error as ThrottlerException).message).toBe('Too many requests, retry after 1 second');
    clock.now += 1_000;
    expect((await hit({ user: agent('a1') })).allowed).toBe(true);
  });

  it('holds a company under its ceiling across its agents and keys, and shows that limit once it binds', async () => {
    for (const id of ['a1', 'a1', 'a2', 'a2']) expect((await hit({ user: agent(id) })).allowed).toBe(true);
    const fifth = await hit({ user: apiKey('k1') });
    expect(fifth.allowed).toBe(true);
    // the company has 0 left, fewer than the key's own 1: its limit is the one shown
    expect(fifth.res.set).toEqual([
      ['X-RateLimit-Limit', '5'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', '60'],
      ['RateLimit-Policy', '"company";q=5;w=60'],
      ['RateLimit', '"company";r=0;t=60'],
    ]);
    const refused = await hit({ user: agent('a3') });
    expect(refused.error).toBeInstanceOf(ThrottlerException);
    expect((refused.error as ThrottlerException).message).toBe('Too many requests for this company, retry after 60 seconds');
    expect(refused.res.headers['Retry-After']).toBe('60');
    // another company, and anonymous callers, are not held by it
    expect((await hit({ user: agent('b1', 'c2') })).allowed).toBe(true);
    expect((await hit({ ip: '198.51.100.7' })).allowed).toBe(true);
  });

  it('counts a weighted route as its weight, and never more than the whole limit', async () => {
    const report = await hit({ user: agent('a1') }, ThingsController, ThingsController.prototype.report);
    expect(report.res.headers['X-RateLimit-Remaining']).toBe('0');
    expect((await hit({ user: agent('a1') })).error).toBeInstanceOf(ThrottlerException);
    const huge = await hit({ user: agent('b2', 'c2') }, ThingsController, ThingsController.prototype.huge);
    expect(huge.allowed).toBe(true);
    expect(huge.res.headers['X-RateLimit-Remaining']).toBe('0');
  });

  it('counts each agent, each API key and each address apart, across routes', async () => {
    await hit({ user: agent('a1'), ip: '198.51.100.1' });
    await hit({ user: agent('a1'), ip: '198.51.100.1' }, ThingsController, ThingsController.prototype.create);
    expect((await hit({ user: agent('a1'), ip: '198.51.100.1' })).error).toBeInstanceOf(ThrottlerException);

    expect((await hit({ user: agent('a2'), ip: '198.51.100.1' })).allowed).toBe(true);
    expect((await hit({ user: apiKey('k1'), ip: '198.51.100.1' })).allowed).toBe(true);
    expect((await hit({ ip: '198.51.100.1' })).allowed).toBe(true);
    await hit({ ip: '198.51.100.1' });
    expect((await hit({ ip: '198.51.100.1' })).error).toBeInstanceOf(ThrottlerException);
    expect((await hit({ ip: '198.51.100.2' })).allowed).toBe(true);
  });

  it('skips routes and controllers marked @SkipThrottle(): no count, no headers', async () => {
    for (let i = 0; i < LIMIT + 3; i++) {
      const health = await hit({ ip: '198.51.100.1' }, HealthController, HealthController.prototype.check);
      expect(health.allowed).toBe(true);
      expect(health.res.set).toEqual([]);
      const docs = await hit({ ip: '198.51.100.1' }, DocsController, DocsController.prototype.json);
      expect(docs.allowed).toBe(true);
      expect(docs.res.set).toEqual([]);
    }
    expect(storage.size).toBe(0);
    expect((await hit({ ip: '198.51.100.1' })).res.headers['X-RateLimit-Remaining']).toBe('1');
  });

  it("applies a route's @Throttle() over the module's limit and window, a function of the request included", async () => {
    const strict = () => hit({ user: agent('a1') }, ThingsController, ThingsController.prototype.strict);
    const first = await strict();
    expect(first.res.headers).toMatchObject({ 'X-RateLimit-Limit': '1', 'X-RateLimit-Remaining': '0', 'RateLimit-Policy': '"default";q=1;w=10' });
    expect((await strict()).error).toBeInstanceOf(ThrottlerException);
    clock.now += 10_000;
    expect((await strict()).allowed).toBe(true);

    const perAddress = (ip: string) => hit({ ip }, ThingsController, ThingsController.prototype.perAddress);
    expect((await perAddress('203.0.113.9')).res.headers['X-RateLimit-Limit']).toBe('3');
    expect((await perAddress('203.0.113.10')).res.headers['X-RateLimit-Limit']).toBe('1');
  });

  it("lets the module's skipIf and ignoreUserAgents through without counting", async () => {
    const options: ThrottlerModuleOptions = {
      throttlers: [{ name: 'default', limit: 1, ttl: TTL }],
      ignoreUserAgents: [/^probe\//],
      skipIf: (context) => context.switchToHttp().getRequest<{ ip?: string }>().ip === '192.0.2.1',
      storage,
    };
    guard = new RateLimitGuard(options, storage, new CachedReflector());
    await guard.onModuleInit();
    for (let i = 0; i < 3; i++) {
      expect((await hit({ ip: '192.0.2.1' })).res.set).toEqual([]);
      expect((await hit({ ip: '192.0.2.2', headers: { 'user-agent': 'probe/1.0' } })).res.set).toEqual([]);
    }
    expect(storage.size).toBe(0);
    expect((await hit({ ip: '192.0.2.2' })).allowed).toBe(true);
    expect((await hit({ ip: '192.0.2.2' })).error).toBeInstanceOf(ThrottlerException);
  });
});
