import { afterEach, describe, expect, it } from '@jest/globals';
import { SharedWindowThrottlerStorage, type CounterIncrement, type CounterStore } from './shared-window-throttler.storage.js';

const TTL = 60_000;
const LIMIT = 3;
/** The start of a window: windows are aligned on multiples of the ttl. */
const START = 1_000 * TTL;

/** A store in memory, shared by the storages given it: what MongoDB is to the API processes. */
class MemoryStore implements CounterStore {
  readonly totals = new Map<string, number>();
  calls = 0;
  failNext = false;
  async sync(increments: CounterIncrement[], ids: string[]): Promise<Map<string, number>> {
    this.calls += 1;
    await Promise.resolve();
    if (this.failNext) {
      this.failNext = false;
      throw new Error('database down');
    }
    for (const { id, hits } of increments) this.totals.set(id, (this.totals.get(id) ?? 0) + hits);
    return new Map(ids.filter((id) => this.totals.has(id)).map((id) => [id, this.totals.get(id) as number]));
  }
}

describe('SharedWindowThrottlerStorage', () => {
  const made: SharedWindowThrottlerStorage[] = [];
  const clock = { now: START };
  const make = (store?: CounterStore, syncIntervalMs = 500) => {
    const storage = new SharedWindowThrottlerStorage({ now: () => clock.now, store, syncIntervalMs });
    made.push(storage);
    return storage;
  };
  afterEach(async () => {
    for (const storage of made.splice(0)) await storage.flush();
    clock.now = START;
  });

  it('counts hits per key in a window aligned on the clock and reports the seconds left', async () => {
    const storage = make();
    clock.now += 10_500;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toEqual({ totalHits: 1, timeToExpire: 50, isBlocked: false, timeToBlockExpire: 0 });
    expect(await storage.increment('b', TTL, LIMIT, TTL, 'default')).toMatchObject({ totalHits: 1 });
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'other')).toMatchObject({ totalHits: 1 });
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default', 2)).toMatchObject({ totalHits: 3, isBlocked: false });
  });

  it('blocks the hit past the limit until the window ends, without counting blocked hits, then starts from zero', async () => {
    const storage = make();
    for (let i = 0; i < LIMIT; i++) await storage.increment('a', TTL, LIMIT, TTL, 'default');
    clock.now += 20_000;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toEqual({ totalHits: 4, timeToExpire: 40, isBlocked: true, timeToBlockExpire: 40 });
    clock.now += 39_000;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toMatchObject({ totalHits: 4, isBlocked: true, timeToBlockExpire: 1 });
    clock.now += 1_000;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toEqual({ totalHits: 1, timeToExpire: 60, isBlocked: false, timeToBlockExpire: 0 });
  });

  it('peek answers the count without counting', async () => {
    const storage = make();
    expect(storage.peek('a', TTL, 'default')).toEqual({ totalHits: 0, timeToExpire: 60 });
    storage.count('default:a', TTL, LIMIT, 2);
    expect(storage.peek('a', TTL, 'default')).toEqual({ totalHits: 2, timeToExpire: 60 });
    expect(storage.peek('a', TTL, 'default')).toEqual({ totalHits: 2, timeToExpire: 60 });
    clock.now += TTL;
    expect(storage.peek('a', TTL, 'default')).toEqual({ totalHits: 0, timeToExpire: 60 });
  });

  it('forgets ended windows when it opens new ones', async () => {
    const storage = make();
    await storage.increment('old', TTL, LIMIT, TTL, 'default');
    clock.now += TTL;
    await storage.increment('fresh', TTL, LIMIT, TTL, 'default');
    expect(storage.size).toBe(1);
  });

  it('shares counts: a process learns the others\' hits at its next sync and blocks on the total', async () => {
    const store = new MemoryStore();
    const one = make(store);
    const two = make(store);
    await one.increment('k', TTL, 10, TTL, 'default', 4);
    await two.increment('k', TTL, 10, TTL, 'default', 4);
    await one.flush();
    await two.flush();
    expect([...store.totals.values()]).toEqual([8]);
    // each knows the shared 8 now: two more pass, the next is refused in either process
    expect(await one.increment('k', TTL, 10, TTL, 'default', 2)).toMatchObject({ totalHits: 10, isBlocked: false });
    await one.flush();
    clock.now += 600;
    // two still decides on its view from its last sync (8): that staleness is the accuracy bound
    expect(await two.increment('k', TTL, 10, TTL, 'default')).toMatchObject({ totalHits: 9, isBlocked: false });
    // the request started a sync (its view was older than the interval); once it is back, two refuses
    await two.flush();
    expect(await two.increment('k', TTL, 10, TTL, 'default')).toMatchObject({ totalHits: 12, isBlocked: true });
  });

  it('syncs from requests at most once per interval, at once for a key it has not seen, one sync at a time', async () => {
    const store = new MemoryStore();
    const storage = make(store, 500);
    await storage.increment('a', TTL, 100, TTL, 'default');
    expect(store.calls).toBe(1); // a new key: at once
    await storage.flush();
    const afterFlush = store.calls;
    for (let i = 0; i < 20; i++) await storage.increment('a', TTL, 100, TTL, 'default');
    expect(store.calls).toBe(afterFlush);
    clock.now += 500;
    await storage.increment('a', TTL, 100, TTL, 'default');
    expect(store.calls).toBe(afterFlush + 1);
    await storage.flush();
    expect([...store.totals.values()]).toEqual([22]);
  });

  it('keeps the hits of a failed sync for the next one', async () => {
    const store = new MemoryStore();
    const storage = make(store);
    store.failNext = true;
    await storage.increment('a', TTL, 100, TTL, 'default', 5);
    await storage.flush();
    expect([...store.totals.values()]).toEqual([5]);
    expect(storage.peek('a', TTL, 'default').totalHits).toBe(5);
  });
});
