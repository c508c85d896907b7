import { describe, expect, it } from '@jest/globals';
import { afterFailure, MAX_RETRY_DELAY_MS, parseRetryAfter, retryDelayMs } from './retry-schedule.js';

const now = new Date('2026-05-01T12:00:00.000Z');

describe('retryDelayMs', () => {
  it.each([
    [1, 1000, 1000],
    [2, 1000, 2000],
    [3, 1000, 4000],
    [5, 1000, 16_000],
    [1, 100, 100],
    [4, 100, 800],
    [10, 1000, 512_000],
  ])('retry %i with backoff %i waits %i ms', (retry, backoff, expected) => {
    expect(retryDelayMs(retry, backoff)).toBe(expected);
  });

  it('is capped at one hour', () => {
    expect(retryDelayMs(10, 3_600_000)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(13, 1000)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(1, 3_600_000)).toBe(3_600_000);
  });
});

describe('parseRetryAfter', () => {
  it('reads delay-seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 120 ', now)).toBe(120_000);
  });

  it('reads an HTTP-date relative to now, a past one as 0', () => {
    expect(parseRetryAfter('Fri, 01 May 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Fri, 01 May 2026 11:00:00 GMT', now)).toBe(0);
  });

  it('caps both forms at one hour', () => {
    expect(parseRetryAfter('86400', now)).toBe(MAX_RETRY_DELAY_MS);
    expect(parseRetryAfter('Sat, 02 May 2026 12:00:00 GMT', now)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('ignores absent and unreadable values', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
    expect(parseRetryAfter('1.5', now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
  });
});

describe('afterFailure', () => {
  const config = { maxRetries: 3, backoffMs: 100 };

  it('schedules retries 1..maxRetries on the backoff, then fails', () => {
    expect(afterFailure(1, config, now)).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 100) });
    expect(afterFailure(2, config, now)).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 200) });
    expect(afterFailure(3, config, now)).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 400) });
    expect(afterFailure(4, config, now)).toEqual({ status: 'failed' });
  });

  it('fails after the single attempt when maxRetries is 0', () => {
    expect(afterFailure(1, { maxRetries: 0, backoffMs: 1000 }, now)).toEqual({ status: 'failed' });
  });

  it('lets Retry-After replace the backoff, but not the retry budget', () => {
    expect(afterFailure(1, config, now, 5000)).toEqual({ status: 'pending', nextAttemptAt: new Date(now.getTime() + 5000) });
    expect(afterFailure(1, config, now, 0)).toEqual({ status: 'pending', nextAttemptAt: now });
    expect(afterFailure(4, config, now, 5000)).toEqual({ status: 'failed' });
  });
});
