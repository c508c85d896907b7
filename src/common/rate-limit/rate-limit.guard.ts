import { Injectable, SetMetadata, type ExecutionContext } from '@nestjs/common';
import {
  DEFAULT_IPV6_SUBNET_PREFIX,
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  type ThrottlerLimitDetail,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import { CachedReflector } from '../route-metadata.js';
import type { SharedWindowThrottlerStorage, ThrottlerStorageRecord } from './shared-window-throttler.storage.js';

/** The throttler every route is counted by, per caller (the library's name for an unnamed one). */
export const DEFAULT_THROTTLER = 'default';
/** The ceiling of a whole company: all its agents and API keys together. */
export const COMPANY_THROTTLER = 'company';

const WEIGHT = 'rate-limit:weight';
/** The library's metadata key of `@SkipThrottle()` (not exported from its index), suffixed by the throttler's name. */
const SKIP_THROTTLE = 'THROTTLER:SKIP';

/**
 * An expensive route counts `weight` requests against every limit (never more than a whole limit, so a
 * route stays callable however low the limit is set).
 */
export const RateLimitWeight = (weight: number) => SetMetadata(WEIGHT, weight);

/** The request fields the tracker reads: the principal the authentication guard set, and the client address. */
export interface TrackedRequest {
  user?: AuthPrincipal | null;
  ip?: string;
}

/** Where the guard keeps, during one request, how much is left of the most constraining limit so far. */
const BINDING_REMAINING = Symbol('rate-limit:binding-remaining');

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
  return addressTracker(req.ip, ipv6SubnetPrefix);
}

/** The address part of a tracker: the client (`req.ip`, proxies per TRUST_PROXY), IPv6 by its /64. */
export function addressTracker(ip: string | undefined, ipv6SubnetPrefix = DEFAULT_IPV6_SUBNET_PREFIX): string {
  return `ip:${ip ? normalizeIp(ip, ipv6SubnetPrefix) : 'unknown'}`;
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
 * ThrottlerGuard with two throttlers: `default` per principal (see `rateLimitTracker`) and `company`, the
 * ceiling of the principal's company (anonymous requests have none), each in one bucket for all routes
 * and counting a route's `@RateLimitWeight`. It sets exactly the headers of `rateLimitHeaders` for the
 * most constraining of the two (the library's own handler would add a `Retry-After` before the
 * `X-RateLimit-*` ones and suffix them for named throttlers). A refusal is the library's
 * `ThrottlerException` (429); the headers are already on the response, so exception filters keep them.
 * `@SkipThrottle()` and `@Throttle()` work as in the library.
 *
 * Register it after the authentication guard so `request.user` is set:
 * `{ provide: APP_GUARD, useExisting: RateLimitGuard }` with `RateLimitModule` imported.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  /** The library reads five keys per throttler and request: from memory after a route's first request. */
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: CachedReflector,
  ) {
    super(options, storage, reflector);
  }

  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return rateLimitTracker(req as TrackedRequest, this.ipv6SubnetPrefix);
  }

  /** One bucket per principal, not per route: the contract counts "per agent or per API key" (the storage keeps throttlers apart). */
  protected override generateKey(_context: ExecutionContext, tracker: string): string {
    return tracker;
  }

  /** A route that `@SkipThrottle()` frees from the per-caller limit is free of the company ceiling too. */
  protected override async shouldSkip(context: ExecutionContext): Promise<boolean> {
    return this.reflector.getAllAndOverride<boolean>(SKIP_THROTTLE + DEFAULT_THROTTLER, [context.getHandler(), context.getClass()]) === true;
  }

  protected override async handleRequest(request: ThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey } = request;
    const { req, res } = this.getRequestResponse(context);

    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    const userAgent = String(req.headers?.['user-agent'] ?? '');
    if (ignoreUserAgents?.some((pattern) => pattern.test(userAgent))) return true;

    const name = throttler.name ?? DEFAULT_THROTTLER;
    const companyId = (req as TrackedRequest).user?.companyId;
    if (name === COMPANY_THROTTLER && !companyId) return true;
    const tracker = name === COMPANY_THROTTLER ? `company:${companyId}` : await getTracker(req, context);
    const key = generateKey(context, tracker, name);
    const weight = this.reflector.getAllAndOverride<number | undefined>(WEIGHT, [context.getHandler(), context.getClass()]) ?? 1;
    const storage = this.storageService as SharedWindowThrottlerStorage;
    const record = await storage.increment(key, ttl, limit, blockDuration, name, Math.min(weight, limit));

    const remaining = record.isBlocked ? -1 : limit - record.totalHits;
    const binding = (req as Record<symbol, number | undefined>)[BINDING_REMAINING];
    if ((throttler.setHeaders ?? this.commonOptions.setHeaders ?? true) && (binding === undefined || remaining < binding)) {
      (req as Record<symbol, number>)[BINDING_REMAINING] = remaining;
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
    const whose = detail.key.startsWith(`${COMPANY_THROTTLER}:`) ? ' for this company' : '';
    return `Too many requests${whose}, retry after ${seconds} second${seconds === 1 ? '' : 's'}`;
  }
}
