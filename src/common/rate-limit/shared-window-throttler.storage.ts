import { Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What `ThrottlerStorage.increment` answers (the library does not export the interface from its index). */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** One window's hits added by this process since its last sync. */
export interface CounterIncrement {
  id: string;
  hits: number;
  /** When the window ends: the shared document may be removed from then on. */
  expiresAt: Date;
}

/** Where the processes of a deployment add up their counts (RateLimitCountersRepository, on MongoDB). */
export interface CounterStore {
  /** Adds the increments, then answers the shared total of each of `ids` (absent: nobody counted it yet). */
  sync(increments: CounterIncrement[], ids: string[]): Promise<Map<string, number>>;
}

export interface SharedWindowThrottlerStorageOptions {
  /** Shares the counts with other processes; without one, each process counts alone. */
  store?: CounterStore;
  /** A sync starts on a request when the last one started longer ago than this. Default 500. */
  syncIntervalMs?: number;
  /** The clock, in epoch milliseconds. Default `Date.now`; tests pass one they control. */
  now?: () => number;
}

/** One key's window as this process sees it. */
interface Window {
  id: string;
  resetsAt: number;
  /** The shared total at the last sync, this process's synced hits included. */
  shared: number;
  /** Hits counted here and not yet sent. */
  pending: number;
  /** Hits being sent by the sync in flight. */
  flushing: number;
  blocked: boolean;
}

export const DEFAULT_SYNC_INTERVAL_MS = 500;

/** Whole seconds until `at`, never negative: what the rate-limit headers carry. */
function secondsUntil(at: number, now: number): number {
  return Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * Fixed windows aligned on the clock (`floor(now / ttl)`), so that every process counts the same window
 * of a key. Each `increment` is a Map lookup in this process: it decides on the shared total known at the
 * last sync plus the hits counted here since. A sync (one batched `$inc` upsert and one read of the
 * totals) starts from a request when the last one is older than `syncIntervalMs`, or at once when this
 * process opens a key's window, never more than one at a time; nothing waits for it. So N processes admit
 * at most `limit + (N - 1) × (the hits one process admits for a key in two sync intervals and a round
 * trip)`: a process is blind only to what another admitted after that one's last flush before this one's
 * last read, and each of the two happens at most one interval (plus the round trip) ago while requests arrive.
 *
 * Semantics:
 * - each hit counts `cost` (a route's weight); the hit that takes the count past `limit` is refused and
 *   blocks the key until the window ends (the shared count then stays above the limit, so the other
 *   processes block it too after their next sync); hits while blocked are refused and not counted;
 * - the library's `blockDuration` is not used: a block ends with its window, which is what every process
 *   can agree on without talking.
 * A failed sync keeps the hits for the next one, and counting goes on locally meanwhile.
 */
export class SharedWindowThrottlerStorage implements ThrottlerStorage, BeforeApplicationShutdown {
  private readonly logger = new Logger('RateLimit');
  private readonly windows = new Map<string, Window>();
  private readonly now: () => number;
  private readonly syncIntervalMs: number;
  private readonly store?: CounterStore;
  private lastSyncAt = Number.NEGATIVE_INFINITY;
  private inFlight: Promise<void> | undefined;
  /** A window was opened while a sync was in flight: sync again as soon as it ends. */
  private syncAgain = false;

  constructor(options: SharedWindowThrottlerStorageOptions = {}) {
    this.now = options.now ?? Date.now;
    this.syncIntervalMs = options.syncIntervalMs ?? DEFAULT_SYNC_INTERVAL_MS;
    this.store = options.store;
  }

  /** Keys currently held (windows not yet swept). */
  get size(): number {
    return this.windows.size;
  }

  async increment(key: string, ttl: number, limit: number, _blockDuration: number, throttlerName: string, cost = 1): Promise<ThrottlerStorageRecord> {
    return this.count(`${throttlerName}:${key}`, ttl, limit, cost);
  }

  /** The key's count in its current window and the seconds until the window ends, without counting. */
  peek(key: string, ttl: number, throttlerName: string): { totalHits: number; timeToExpire: number } {
    const now = this.now();
    const resetsAt = this.windowEnd(now, ttl);
    const window = this.windows.get(`${throttlerName}:${key}`);
    const totalHits = window !== undefined && window.resetsAt === resetsAt ? this.total(window) : 0;
    return { totalHits, timeToExpire: secondsUntil(resetsAt, now) };
  }

  /** Counts one hit of `cost` against the key's window and answers what the throttler needs to decide. */
  count(id: string, ttl: number, limit: number, cost = 1): ThrottlerStorageRecord {
    const now = this.now();
    const resetsAt = this.windowEnd(now, ttl);
    let window = this.windows.get(id);
    let opened = false;
    if (window === undefined || window.resetsAt !== resetsAt) {
      window = { id, resetsAt, shared: 0, pending: 0, flushing: 0, blocked: false };
      this.windows.set(id, window);
      opened = true;
    }
    const timeToExpire = secondsUntil(resetsAt, now);
    const blocked = (totalHits: number): ThrottlerStorageRecord => ({ totalHits, timeToExpire, isBlocked: true, timeToBlockExpire: timeToExpire });

    if (window.blocked) return blocked(this.total(window));
    window.pending += cost;
    this.maybeSync(now, opened);
    const totalHits = this.total(window);
    if (totalHits <= limit) return { totalHits, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
    window.blocked = true;
    return blocked(totalHits);
  }

  /** Sends what is pending and waits for it: shutdown must not lose the last interval's hits. */
  async flush(): Promise<void> {
    await this.inFlight;
    if (this.store) await this.sync();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  private windowEnd(now: number, ttl: number): number {
    return (Math.floor(now / ttl) + 1) * ttl;
  }

  private total(window: Window): number {
    return window.shared + window.pending + window.flushing;
  }

  private maybeSync(now: number, opened: boolean): void {
    if (this.store === undefined) {
      if (opened) this.sweep(now);
      return;
    }
    if (this.inFlight !== undefined) {
      this.syncAgain ||= opened;
      return;
    }
    if (opened || now - this.lastSyncAt >= this.syncIntervalMs) {
      this.lastSyncAt = now;
      this.inFlight = this.sync().finally(() => {
        this.inFlight = undefined;
        if (this.syncAgain) {
          this.syncAgain = false;
          this.maybeSync(this.now(), true);
        }
      });
    }
  }

  /** Removes the windows that have ended; their hits no longer matter. */
  private sweep(now: number): void {
    for (const [id, window] of this.windows) if (window.resetsAt <= now) this.windows.delete(id);
  }

  private async sync(): Promise<void> {
    const now = this.now();
    this.sweep(now);
    const live = [...this.windows.values()];
    if (live.length === 0 || this.store === undefined) return;
    const increments: CounterIncrement[] = [];
    for (const window of live) {
      window.flushing = window.pending;
      window.pending = 0;
      if (window.flushing > 0) increments.push({ id: this.documentId(window), hits: window.flushing, expiresAt: new Date(window.resetsAt) });
    }
    try {
      const totals = await this.store.sync(increments, live.map((window) => this.documentId(window)));
      for (const window of live) {
        window.shared = Math.max(totals.get(this.documentId(window)) ?? 0, window.shared + window.flushing);
        window.flushing = 0;
      }
    } catch (error) {
      for (const window of live) {
        window.pending += window.flushing;
        window.flushing = 0;
      }
      this.logger.warn(`Could not share the rate-limit counts (counting locally meanwhile): ${(error as Error).message}`);
    }
  }

  /** The window's shared document: its key and the end of its window, so a new window is a new document. */
  private documentId(window: Window): string {
    return `${window.id}@${window.resetsAt}`;
  }
}
