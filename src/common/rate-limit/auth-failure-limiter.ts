import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { AppConfig } from '../../config/app-config.js';
import { addressTracker, rateLimitHeaders } from './rate-limit.guard.js';
import { RATE_LIMIT_STORAGE } from './rate-limit-storage.js';
import type { SharedWindowThrottlerStorage } from './shared-window-throttler.storage.js';

export const AUTH_FAILURES_THROTTLER = 'auth-failures';

/**
 * Failed authentications per client address: a wrong login, a refused registration, a bad bearer token or
 * API key each count one. Once an address reaches AUTH_FAILURE_LIMIT in a window, every request of it that
 * tries to authenticate answers 429 until the window ends, before any credential is checked: guessing
 * tokens, keys or passwords costs a window per AUTH_FAILURE_LIMIT tries, from any number of keys.
 * Counted in the shared rate-limit storage, so across the processes of a deployment.
 */
@Injectable()
export class AuthFailureLimiter {
  private readonly limit: number;
  private readonly ttl: number;
  /**
   * When this process last counted a failure. The storage holds an address's failures only once this
   * process has counted one of them in the window (its first opens the window and reads the shared count),
   * so until then no address can be over the limit here and the check costs nothing (not even parsing
   * the address).
   */
  private lastFailureAt = Number.NEGATIVE_INFINITY;

  constructor(
    @Inject(RATE_LIMIT_STORAGE) private readonly storage: SharedWindowThrottlerStorage,
    config: AppConfig,
  ) {
    this.limit = config.authFailureLimit;
    this.ttl = config.throttleTtlMs;
  }

  /** Throws the throttler's 429, with the rate-limit headers of this limit, when the address has failed too often. */
  assertAllowed(req: Request, res: Response): void {
    if (this.lastFailureAt < Math.floor(Date.now() / this.ttl) * this.ttl) return;
    const { totalHits, timeToExpire } = this.storage.peek(addressTracker(req.ip), this.ttl, AUTH_FAILURES_THROTTLER);
    if (totalHits < this.limit) return;
    const record = { totalHits, timeToExpire, isBlocked: true, timeToBlockExpire: timeToExpire };
    for (const [header, value] of rateLimitHeaders({ name: AUTH_FAILURES_THROTTLER, limit: this.limit, ttlMs: this.ttl }, record)) {
      res.setHeader(header, value);
    }
    const seconds = Math.max(1, timeToExpire);
    throw new ThrottlerException(`Too many failed authentications from this address, retry after ${seconds} second${seconds === 1 ? '' : 's'}`);
  }

  recordFailure(req: Request): void {
    this.lastFailureAt = Date.now();
    this.storage.count(`${AUTH_FAILURES_THROTTLER}:${addressTracker(req.ip)}`, this.ttl, Number.MAX_SAFE_INTEGER);
  }
}
