import { afterEach, describe, expect, it } from '@jest/globals';
import { FixedWindowThrottlerStorage } from './fixed-window-throttler.storage.js';

const TTL = 60_000;
const LIMIT = 3;

/** A storage on a clock the test moves by hand. */
function storageAt(start = 1_000_000, sweepIntervalMs?: number) {
  const clock = { now: start };
  const storage = new FixedWindowThrottlerStorage({ now: () => clock.now, sweepIntervalMs });
  return { clock, storage };
}

describe('FixedWindowThrottlerStorage', () => {
  const created: FixedWindowThrottlerStorage[] = [];
  const make = (start?: number, sweepIntervalMs?: number) => {
    const made = storageAt(start, sweepIntervalMs);
    created.push(made.storage);
    return made;
  };
  afterEach(() => {
    for (const storage of created.splice(0)) storage.onApplicationShutdown();
  });

  it('counts hits per key within the window and reports the seconds left', async () => {
    const { clock, storage } = make();
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
    clock.now += 10_500;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toMatchObject({ totalHits: 2, timeToExpire: 50 });
    // another key and another throttler name are counted apart
    expect(await storage.increment('b', TTL, LIMIT, TTL, 'default')).toMatchObject({ totalHits: 1 });
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'other')).toMatchObject({ totalHits: 1 });
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toMatchObject({ totalHits: 3, isBlocked: false });
  });

  it('starts a new window from zero once the window is over', async () => {
    const { clock, storage } = make();
    await storage.increment('a', TTL, LIMIT, TTL, 'default');
    await storage.increment('a', TTL, LIMIT, TTL, 'default');
    clock.now += TTL - 1;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toMatchObject({ totalHits: 3, timeToExpire: 1 });
    clock.now += 1;
    expect(await storage.increment('a', TTL, LIMIT, TTL, 'default')).toMatchObject({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
    });
  });

  it('blocks the hit past the limit for blockDuration, without counting blocked hits', async () => {
    const { clock, storage } = make();
    const block = 90_000;
    for (let i = 0; i < LIMIT; i++) await storage.increment('a', TTL, LIMIT, block, 'default');
    clock.now += 5_000;
    expect(await storage.increment('a', TTL, LIMIT, block, 'default')).toEqual({
      totalHits: 4,
      timeToExpire: 90,
      isBlocked: true,
      timeToBlockExpire: 90,
    });
    // still blocked after the window itself is over, and refused hits are not counted
    clock.now += TTL;
    expect(await storage.increment('a', TTL, LIMIT, block, 'default')).toMatchObject({
      totalHits: 4,
      isBlocked: true,
      timeToBlockExpire: 30,
    });
    clock.now += 30_000;
    expect(await storage.increment('a', TTL, LIMIT, block, 'default')).toEqual({
      totalHits: 1,
      timeToExpire: 60,
      isBlocked: false,
      timeToBlockExpire: 0,
    });
  });

  it('a block shorter than the window ends on time and the key starts again from zero', async () => {
    const { clock, storage } = make();
    for (let i = 0; i <= LIMIT; i++) await storage.increment('a', TTL, LIMIT, 2_000, 'default');
    clock.now += 1_999;
    expect(await storage.increment('a', TTL, LIMIT, 2_000, 'default')).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
    clock.now += 1;
    expect(await storage.increment('a', TTL, LIMIT, 2_000, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('without a block duration, refuses until the window ends', async () => {
    const { clock, storage } = make();
    for (let i = 0; i < LIMIT; i++) await storage.increment('a', TTL, LIMIT, 0, 'default');
    clock.now += 20_000;
    expect(await storage.increment('a', TTL, LIMIT, 0, 'default')).toMatchObject({ isBlocked: true, timeToBlockExpire: 40 });
    clock.now += 40_000;
    expect(await storage.increment('a', TTL, LIMIT, 0, 'default')).toMatchObject({ totalHits: 1, isBlocked: false });
  });

  it('sweep removes only the windows whose period and block are over', async () => {
    const { clock, storage } = make();
    await storage.increment('old', TTL, LIMIT, TTL, 'default');
    for (let i = 0; i <= LIMIT; i++) await storage.increment('blocked', TTL, LIMIT, 3 * TTL, 'default');
    clock.now += TTL;
    await storage.increment('fresh', TTL, LIMIT, TTL, 'default');
    expect(storage.size).toBe(3);
    expect(storage.sweep()).toBe(1); // "old" only: "blocked" is still blocked, "fresh" is live
    expect(storage.size).toBe(2);
    clock.now += 2 * TTL;
    expect(storage.sweep()).toBe(2);
    expect(storage.size).toBe(0);
  });

  it('sweeps on an unref\'d timer, started by the first hit and stopped at shutdown', async () => {
    const { clock, storage } = make(1_000_000, 20);
    const timer = () => (storage as unknown as { sweepTimer?: NodeJS.Timeout }).sweepTimer;
    expect(timer()).toBeUndefined();
    await storage.increment('a', TTL, LIMIT, TTL, 'default');
    expect(timer()?.hasRef()).toBe(false);
    clock.now += TTL;
    // The timer fires every 20 ms; poll rather than sleep a fixed time, so a loaded machine cannot fail it.
    for (let waited = 0; storage.size > 0 && waited < 2_000; waited += 10) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(storage.size).toBe(0);
    storage.onApplicationShutdown();
    expect(timer()).toBeUndefined();
  });
});
