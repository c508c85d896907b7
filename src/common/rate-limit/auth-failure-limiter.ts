import { Inject, Injectable } from '@nestjs/common';
import { ThrottlerException } from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { AppConfig } from '../../config/app-config.js';
import { addressTracker, rateLimitHeaders } from './rate-limit.guard.js';
import { RATE_LIMIT_STORAGE } from './rate-limit-storage.js';
import type { SharedWindowThrottlerStorage } from './shared-window-throttler.storage.js';

export const AUTH_FAILURES_THROTTLER = 'auth-failures';

/** Longer than any e-mail the login and register bodies accept: such a body is refused (400) before it can fail. */
const MAX_EMAIL_LENGTH = 320;

/**
 * Whom a failure is counted against: the client address, and for the routes that take an e-mail and a password
 * (login, register) that e-mail too, hashed (the shared storage keeps no addresses in clear). Null: a login body
 * without a usable e-mail, which validation refuses before any password is checked.
 */
function trackerOf(req: Request, perEmail: boolean): string | null {
  const address = addressTracker(req.ip);
  if (!perEmail) return address;
  const email: unknown = (req.body as { email?: unknown } | undefined)?.email;
  if (typeof email !== 'string' || email.length > MAX_EMAIL_LENGTH) return null;
  const digest = createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22);
  return `${address}:email:${digest}`;
}

/**
 * Failed authentications, counted where they guess: a bad bearer token or API key per client address; a wrong
 * login or a refused registration per address and e-mail (`perEmail`). Once a tracker reaches AUTH_FAILURE_LIMIT
 * in a window, its requests that try to authenticate answer 429 until the window ends, before any credential is
 * checked: guessing tokens or keys costs a window per AUTH_FAILURE_LIMIT tries from an address, guessing one
 * e-mail's password a window per AUTH_FAILURE_LIMIT tries from an address, while the other people behind that
 * address (an office, a carrier's NAT) still log in, and a flood of bad tokens from it does not lock their
 * logins out. Counted in the shared rate-limit storage, so across the processes of a deployment.
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

  /** Throws the throttler's 429, with the rate-limit headers of this limit, when the tracker has failed too often. */
  assertAllowed(req: Request, res: Response, perEmail = false): void {
    if (this.lastFailureAt < Math.floor(Date.now() / this.ttl) * this.ttl) return;
    const tracker = trackerOf(req, perEmail);
    if (tracker === null) return;
    const { totalHits, timeToExpire } = this.storage.peek(tracker, this.ttl, AUTH_FAILURES_THROTTLER);
    if (totalHits < this.limit) return;
    const record = { totalHits, timeToExpire, isBlocked: true, timeToBlockExpire: timeToExpire };
    for (const [header, value] of rateLimitHeaders({ name: AUTH_FAILURES_THROTTLER, limit: this.limit, ttlMs: this.ttl }, record)) {
      res.setHeader(header, value);
    }
    const seconds = Math.max(1, timeToExpire);
    const retry = `retry after ${seconds} second${seconds === 1 ? '' : 's'}`;
    throw new ThrottlerException(
      perEmail ? `Too many failed logins for this e-mail from this address, ${retry}` : `Too many failed authentications from this address, ${retry}`,
    );
  }

  recordFailure(req: Request, perEmail = false): void {
    const tracker = trackerOf(req, perEmail);
    if (tracker === null) return;
    this.lastFailureAt = Date.now();
    this.storage.count(`${AUTH_FAILURES_THROTTLER}:${tracker}`, this.ttl, Number.MAX_SAFE_INTEGER);
  }
}
