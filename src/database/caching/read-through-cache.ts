import type { WriteGeneration } from './write-generation.js';
import { BoundedMap } from '../../common/bounded-map.js';

/** How long a write made by another process may take to show in this one's caches, by default. */
export const CROSS_PROCESS_STALENESS_MS = 2_000;
const DEFAULT_MAX_ENTRIES = 10_000;

export interface ReadThroughCacheOptions<V> {
  /** How long a value is served after it was read: the bound on staleness from other processes' writes. Default CROSS_PROCESS_STALENESS_MS. */
  ttlMs?: number;
  /** The most keys held; beyond, the least recently read goes. Default 10 000. */
  maxEntries?: number;
  /**
   * Which answers are kept once read (default: all). An answer not kept still serves the callers that
   * shared its read, so a flood of one unknown key costs one read at a time, but fills no entry.
   */
  keep?: (value: V) => boolean;
  /** The clock, in epoch milliseconds. Default `Date.now`; tests pass one they control. */
  now?: () => number;
}

interface Entry<V> {
  value: Promise<V>;
  generation: number;
  expiresAt: number;
}

/**
 * Serves values of one collection from memory. An entry is used only while no write to that collection
 * has completed in this process since its read began (WriteGeneration) and for at most `ttlMs`; a write
 * elsewhere shows here within `ttlMs`. Concurrent misses of one key share one read. The values are
 * shared between callers: treat them as read-only.
 */
export class ReadThroughCache<V> {
  private readonly entries: BoundedMap<string, Entry<V>>;
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly keep?: (value: V) => boolean;

  constructor(
    private readonly generation: WriteGeneration,
    options: ReadThroughCacheOptions<V> = {},
  ) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? CROSS_PROCESS_STALENESS_MS;
    this.entries = new BoundedMap(options.maxEntries ?? DEFAULT_MAX_ENTRIES);
    this.keep = options.keep;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string, read: () => Promise<V>): Promise<V> {
    const now = this.now();
    const cached = this.entries.get(key);
    // Reinserted on every hit, so that the Map's first key is always the least recently read.
    this.entries.delete(key);
    if (cached && cached.generation === this.generation.current && cached.expiresAt > now) {
      this.entries.set(key, cached);
      return cached.value;
    }

    // Tagged with the count before the read: a write that completes meanwhile makes the entry stale.
    const entry: Entry<V> = { value: read(), generation: this.generation.current, expiresAt: now + this.ttlMs };
    this.entries.set(key, entry);
    const forget = () => {
      if (this.entries.get(key) === entry) this.entries.delete(key);
    };
    const keep = this.keep;
    entry.value.then((value) => {
      if (keep && !keep(value)) forget();
    }, forget);
    return entry.value;
  }
}
