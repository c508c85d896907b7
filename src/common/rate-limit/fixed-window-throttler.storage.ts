import type { OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What `ThrottlerStorage.increment` answers (the library does not export the interface from its index). */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

export interface FixedWindowThrottlerStorageOptions {
  /** Milliseconds between two sweeps of expired windows. Default 60 000. */
  sweepIntervalMs?: number;
  /** The clock, in epoch milliseconds. Default `Date.now`; tests pass one they control. */
  now?: () => number;
}

/** One key's counter: the hits of the current window, when it ends, and until when the key is blocked. */
interface Window {
  hits: number;
  resetsAt: number;
  blockedUntil: number;
}

export const DEFAULT_SWEEP_INTERVAL_MS = 60_000;

/** Whole seconds until `ms` from now, never negative: what the rate-limit headers carry. */
function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * A fixed-window counter per key, in one process's memory: every `increment` is a Map lookup and a few
 * comparisons, whatever the number of hits in the window (the library's default storage keeps a list
 * of hit times per key and filters it on every request).
 *
 * Semantics, for any other implementation (a MongoDB-backed one for several processes) to match:
 * - the first hit of a key opens a window of `ttl` ms; each hit in it counts one;
 * - the hit that takes the count past `limit` is refused and blocks the key for `blockDuration` ms
 *   (with `blockDuration <= 0`, until the window ends); hits while blocked are refused and not counted;
 * - the first hit after the window ended, or after a block ended, opens a new window from zero
 *   (as the library's storage does), so `timeToBlockExpire` is a truthful Retry-After.
 * Times in the record are whole seconds, rounded up, as in the library's own storage.
 *
 * Expired windows are removed when their key comes back and by a sweep every `sweepIntervalMs`, on an
 * unref'd timer that never keeps the process alive and stops at application shutdown.
 */
export class FixedWindowThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, Window>();
  private readonly now: () => number;
  private readonly sweepIntervalMs: number;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(options: FixedWindowThrottlerStorageOptions = {}) {
    this.now = options.now ?? Date.now;
    this.sweepIntervalMs = options.sweepIntervalMs ?? DEFAULT_SWEEP_INTERVAL_MS;
  }

  /** Keys currently held (live or not yet swept). */
  get size(): number {
    return this.windows.size;
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const now = this.now();
    const id = `${throttlerName}:${key}`;
    let window = this.windows.get(id);

    if (window !== undefined && window.blockedUntil > now) {
      return {
        totalHits: window.hits,
        timeToExpire: secondsUntil(Math.max(window.resetsAt, window.blockedUntil), now),
        isBlocked: true,
        timeToBlockExpire: secondsUntil(window.blockedUntil, now),
      };
    }

    if (window === undefined) {
      window = { hits: 0, resetsAt: now + ttl, blockedUntil: 0 };
      this.windows.set(id, window);
      this.startSweeping();
    } else if (now >= window.resetsAt || window.blockedUntil !== 0) {
      window.hits = 0;
      window.resetsAt = now + ttl;
      window.blockedUntil = 0;
    }

    window.hits += 1;
    const timeToExpire = secondsUntil(window.resetsAt, now);
    if (window.hits <= limit) {
      return { totalHits: window.hits, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
    }
    window.blockedUntil = blockDuration > 0 ? now + blockDuration : window.resetsAt;
    return {
      totalHits: window.hits,
      timeToExpire: secondsUntil(Math.max(window.resetsAt, window.blockedUntil), now),
      isBlocked: true,
      timeToBlockExpire: secondsUntil(window.blockedUntil, now),
    };
  }

  /** Removes every window whose period and block are both over; answers how many it removed. */
  sweep(now: number = this.now()): number {
    let removed = 0;
    for (const [id, window] of this.windows) {
      if (now >= window.resetsAt && now >= window.blockedUntil) {
        this.windows.delete(id);
        removed += 1;
      }
    }
    return removed;
  }

  onApplicationShutdown(): void {
    if (this.sweepTimer !== undefined) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
    this.windows.clear();
  }

  private startSweeping(): void {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = setInterval(() => this.sweep(), this.sweepIntervalMs);
    this.sweepTimer.unref();
  }
}
