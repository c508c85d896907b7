/** No wait between two attempts is longer than an hour, whatever the backoff or Retry-After says. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

export interface RetryConfig {
  maxRetries: number;
  backoffMs: number;
}

/** Retry `n` (1 for the first retry) waits `backoffMs × 2^(n-1)`, capped at one hour. */
export function retryDelayMs(retry: number, backoffMs: number): number {
  return Math.min(backoffMs * 2 ** (retry - 1), MAX_RETRY_DELAY_MS);
}

/**
 * A `Retry-After` header as a delay in ms: delay-seconds or an HTTP-date (RFC 9110 §10.2.3), capped
 * at one hour; a date in the past is 0. Undefined when absent or unreadable.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_DELAY_MS);
  const at = Date.parse(text);
  if (Number.isNaN(at) || !/[a-z]/i.test(text)) return undefined;
  return Math.min(Math.max(at - now.getTime(), 0), MAX_RETRY_DELAY_MS);
}

export type AfterFailure = { status: 'failed' } | { status: 'pending'; nextAttemptAt: Date };

/**
 * What follows a failed attempt: `attemptsMade` counts it, so with `maxRetries` retries a delivery
 * gets `maxRetries + 1` attempts before it is failed. `retryAfterMs` (the receiver's 429/503
 * Retry-After) replaces the backoff for the next attempt.
 */
export function afterFailure(attemptsMade: number, config: RetryConfig, now: Date, retryAfterMs?: number): AfterFailure {
  const retry = attemptsMade;
  if (retry > config.maxRetries) return { status: 'failed' };
  const delay = retryAfterMs ?? retryDelayMs(retry, config.backoffMs);
  return { status: 'pending', nextAttemptAt: new Date(now.getTime() + delay) };
}
