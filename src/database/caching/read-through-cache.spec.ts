import { describe, expect, it } from '@jest/globals';
import { ReadThroughCache } from './read-through-cache.js';
import { WriteGeneration } from './write-generation.js';

/** A cache on a clock the test moves, and a read that counts its calls and answers what `value` holds. */
function setUp(options: { ttlMs?: number; maxEntries?: number; keep?: (value: string) => boolean } = {}) {
  const clock = { now: 1_000_000 };
  const writes = new WriteGeneration();
  const cache = new ReadThroughCache<string>(writes, {
    ttlMs: options.ttlMs ?? 2_000,
    maxEntries: options.maxEntries ?? 100,
    keep: options.keep,
    now: () => clock.now,
  });
  const source = { value: 'v1', reads: 0 };
  const read = async () => {
    source.reads += 1;
    return source.value;
  };
  return { clock, writes, cache, source, read };
}

describe('ReadThroughCache', () => {
  it('serves a key from memory until its TTL runs out, then reads again', async () => {
    const { clock, cache, source, read } = setUp();
    expect(await cache.get('a', read)).toBe('v1');
    source.value = 'v2';
    clock.now += 1_999;
    expect(await cache.get('a', read)).toBe('v1');
    expect(source.reads).toBe(1);
    clock.now += 1;
    expect(await cache.get('a', read)).toBe('v2');
    expect(source.reads).toBe(2);
  });

  it('reads again after a write to the collection in this process, however recent the entry', async () => {
    const { writes, cache, source, read } = setUp();
    await cache.get('a', read);
    source.value = 'v2';
    writes.bump();
    expect(await cache.get('a', read)).toBe('v2');
    expect(await cache.get('a', read)).toBe('v2');
    expect(source.reads).toBe(2);
  });

  it('does not keep a value whose read overlapped a write', async () => {
    const { writes, cache, source } = setUp();
    let finish: (value: string) => void = () => undefined;
    const slowRead = () => new Promise<string>((resolve) => (finish = resolve));
    const pending = cache.get('a', slowRead);
    // The write completes while the read is in flight; the read may have seen the old value.
    writes.bump();
    finish('old');
    expect(await pending).toBe('old');
    source.value = 'new';
    expect(await cache.get('a', async () => source.value)).toBe('new');
  });

  it('shares one read between concurrent misses of a key', async () => {
    const { cache, source, read } = setUp();
    const answers = await Promise.all([cache.get('a', read), cache.get('a', read), cache.get('a', read)]);
    expect(answers).toEqual(['v1', 'v1', 'v1']);
    expect(source.reads).toBe(1);
  });

  it('does not keep a failed read', async () => {
    const { cache, read } = setUp();
    await expect(cache.get('a', async () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(cache.size).toBe(0);
    expect(await cache.get('a', read)).toBe('v1');
  });

  it('holds at most maxEntries keys, dropping the least recently read', async () => {
    const { cache, source, read } = setUp({ maxEntries: 2 });
    await cache.get('a', read);
    await cache.get('b', read);
    await cache.get('a', read);
    await cache.get('c', read);
    expect(cache.size).toBe(2);
    expect(source.reads).toBe(3);
    await cache.get('a', read);
    await cache.get('c', read);
    expect(source.reads).toBe(3);
    await cache.get('b', read);
    expect(source.reads).toBe(4);
  });

  it('does not keep an answer `keep` refuses, but shares its read with concurrent callers', async () => {
    const { cache, source, read } = setUp({ keep: (value) => value !== 'missing' });
    source.value = 'missing';
    expect(await Promise.all([cache.get('a', read), cache.get('a', read)])).toEqual(['missing', 'missing']);
    expect(source.reads).toBe(1);
    expect(cache.size).toBe(0);
    expect(await cache.get('a', read)).toBe('missing');
    expect(source.reads).toBe(2);
    source.value = 'found';
    await cache.get('a', read);
    await cache.get('a', read);
    expect(source.reads).toBe(3);
    expect(cache.size).toBe(1);
  });
});
