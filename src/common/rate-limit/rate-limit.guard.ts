import { Injectable, type ExecutionContext } from '@nestjs/common';
import {
  DEFAULT_IPV6_SUBNET_PREFIX,
  normalizeIp,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import type { ThrottlerStorageRecord } from './fixed-window-throttler.storage.js';

/** The throttler every route is counted by (the library's name for an unnamed one). */
export const DEFAULT_THROTTLER = 'default';

/** The request fields the tracker reads: the principal the authentication guard set, and the client address. */
export interface TrackedRequest {
  user?: AuthPrincipal | null;
  ip?: string;
}

/**
 * Who a request is counted against: the agent of a bearer token, the API key, or else the client address
 * (`req.ip`, which honours Express `trust proxy` when the app sets it). IPv6 addresses are grouped by
 * their /64 and IPv4-mapped ones shown as IPv4, as the library's own tracker does, so one host cannot
 * escape the limit by walking its own subnet.
 */
export function rateLimitTracker(req: TrackedRequest, ipv6SubnetPrefix = DEFAULT_IPV6_SUBNET_PREFIX): string {
  const user = req.user;
  if (user?.kind === 'agent' && user.agentId) return `agent:${user.agentId}`;
  if (user?.kind === 'api-key' && user.apiKeyId) return `key:${user.apiKeyId}`;
  return `ip:${req.ip ? normalizeIp(req.ip, ipv6SubnetPrefix) : 'unknown'}`;
}

/** Seconds a refused caller should wait: until its block ends, and at least one. */
export function retryAfterSeconds(record: ThrottlerStorageRecord): number {
  return Math.max(1, record.timeToBlockExpire);
}

/**
 * The complete set of rate-limit headers of one response, in the order they are set:
 * `X-RateLimit-Limit`, `-Remaining`, `-Reset` (seconds until the count starts again), the IETF draft's
 * structured fields `RateLimit-Policy: "<name>";q=<limit>;w=<window seconds>` and
 * `RateLimit: "<name>";r=<remaining>;t=<seconds>`, and on a refusal `Retry-After`. While a key is blocked
 * the remaining quota is 0 and the reset is the end of the block.
 */
export function rateLimitHeaders(
  policy: { name: string; limit: number; ttlMs: number },
  record: ThrottlerStorageRecord,
): Array<[string, string]> {
  const remaining = record.isBlocked ? 0 : Math.max(0, policy.limit - record.totalHits);
  const reset = record.isBlocked ? retryAfterSeconds(record) : record.timeToExpire;
  const windowSeconds = Math.max(1, Math.ceil(policy.ttlMs / 1000));
  const name = JSON.stringify(policy.name);
  const headers: Array<[string, string]> = [
    ['X-RateLimit-Limit', String(policy.limit)],
    ['X-RateLimit-Remaining', String(remaining)],
    ['X-RateLimit-Reset', String(reset)],
    ['RateLimit-Policy', `${name};q=${policy.limit};w=${windowSeconds}`],
    ['RateLimit', `${name};r=${remaining};t=${reset}`],
  ];
  if (record.isBlocked) headers.push(['Retry-After', String(reset)]);
  return headers;
}

/**
 * ThrottlerGuard counting per principal (see `rateLimitTracker`) in one bucket for all routes, and
 * setting exactly the headers of `rateLimitHeaders` on the response (the library's own handler would
 * add a `Retry-After` before the `X-RateLimit-*` ones and suffix them for named throttlers).
 * A refusal is the library's `ThrottlerException` (429); the headers are already on the response,
 * so exception filters keep them. `@SkipThrottle()` and `@Throttle()` work as in the library.
 *
 * Register it after the authentication guard so `request.user` is set:
 * `{ provide: APP_GUARD, useExisting: RateLimitGuard }` with `RateLimitModule` imported.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return rateLimitTracker(req as TrackedRequest, this.ipv6SubnetPrefix);
  }

  /** One bucket per principal and throttler, not per route: the contract counts "per agent or per API key". */
  protected override generateKey(_context: ExecutionContext, tracker: string, throttlerName: string): string {
    return `${throttlerName}:${tracker}`;
  }

  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = request;
    const { req, res } = this.getRequestResponse(context);

    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    const userAgent = String(req.headers?.['user-agent'] ?? '');
    if (ignoreUserAgents?.some((pattern) => pattern.test(userAgent))) return true;

    const name = throttler.name ?? DEFAULT_THROTTLER;
    const tracker = await getTracker(req, context);
    const key = generateKey(context, tracker, name);
    const record = await this.storageService.increment(key, ttl, limit, blockDuration, name);

    if (throttler.setHeaders ?? this.commonOptions.setHeaders ?? true) {
      for (const [header, value] of rateLimitHeaders({ name, limit, ttlMs: ttl }, record)) {
        this.setResponseHeader(res, header, value);
      }
    }
    if (record.isBlocked) {
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record });
    }
    return true;
  }

  protected override async getErrorMessage(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<string> {
    if (!Array.isArray(this.options) && this.options.errorMessage) return super.getErrorMessage(context, detail);
    const seconds = retryAfterSeconds(detail);
    return `Too many requests, retry after ${seconds} second${seconds === 1 ? '' : 's'}`;
  }
}
