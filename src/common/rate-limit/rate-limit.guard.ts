import { Injectable, SetMetadata, type ExecutionContext } from '@nestjs/common';
import {
  DEFAULT_IPV6_SUBNET_PREFIX,
  InjectThrottlerOptions,
  InjectThrottlerStorage,
  normalizeIp,
  ThrottlerGuard,
  type Resolvable,
  type ThrottlerGenerateKeyFunction,
  type ThrottlerGetTrackerFunction,
  type ThrottlerLimitDetail,
  type ThrottlerOptions,
  type ThrottlerModuleOptions,
  type ThrottlerRequest,
  type ThrottlerStorage,
} from '@nestjs/throttler';
import type { AuthPrincipal } from '../../auth/auth-principal.js';
import { CachedReflector, PerRoute } from '../route-metadata.js';
import type { SharedWindowThrottlerStorage, ThrottlerStorageRecord } from './shared-window-throttler.storage.js';

/** The throttler every route is counted by, per caller (the library's name for an unnamed one). */
export const DEFAULT_THROTTLER = 'default';
/** The ceiling of a whole company: all its agents and API keys together. */
export const COMPANY_THROTTLER = 'company';

const WEIGHT = 'rate-limit:weight';

/** A route's weight: fixed, or read from the request (its parsed body) when the cost depends on it. */
export type Weight = number | ((request: { body?: unknown }) => number);

/**
 * An expensive route counts `weight` requests against every limit (never more than a whole limit, so a
 * route stays callable however low the limit is set). A function weighs each request, e.g. by how many items its
 * body names (at least 1).
 */
export const RateLimitWeight = (weight: Weight) => SetMetadata(WEIGHT, weight);

/** The request fields the tracker reads: the principal the authentication guard set, and the client address. */
export interface TrackedRequest {
  user?: AuthPrincipal | null;
  ip?: string;
}

/** Where the guard keeps, during one request, the most constraining limit counted so far. */
const BINDING_LIMIT = Symbol('rate-limit:binding-limit');

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

/** A throttler's numbers for one request. */
interface ThrottlerValues {
  limit: number;
  ttl: number;
  blockDuration: number;
}

/** One throttler as a route applies it: its decorators' values over the module's, read once per route. */
interface RouteThrottler {
  throttler: ThrottlerOptions;
  name: string;
  /** The numbers, when all three are plain ones (the usual case); otherwise resolved on each request. */
  fixed: ThrottlerValues | undefined;
  limit: Resolvable<number>;
  ttl: Resolvable<number>;
  /** Undefined: the window's. */
  blockDuration: Resolvable<number> | undefined;
  getTracker: ThrottlerGetTrackerFunction;
  generateKey: ThrottlerGenerateKeyFunction;
}

/** What `handleRequest` gets from this guard's `canActivate`: the library's request and the route's weight. */
type WeightedThrottlerRequest = ThrottlerRequest & { weight?: number };

/** What a route is counted by: its throttlers (none when skipped) and its weight. */
interface RoutePlan {
  throttlers: RouteThrottler[];
  weight: Weight;
}

/** The limit a response reports: the one with the least left among the throttlers counted so far. */
interface BindingLimit {
  policy: { name: string; limit: number; ttlMs: number };
  record: ThrottlerStorageRecord;
  remaining: number;
}

/**
 * The library's metadata keys (not exported from its index), suffixed by the throttler's name. `@SkipThrottle()`
 * of the per-caller throttler frees a route from the company ceiling too.
 */
const METADATA = {
  skip: 'THROTTLER:SKIP',
  limit: 'THROTTLER:LIMIT',
  ttl: 'THROTTLER:TTL',
  blockDuration: 'THROTTLER:BLOCK_DURATION',
  tracker: 'THROTTLER:TRACKER',
  keyGenerator: 'THROTTLER:KEY_GENERATOR',
} as const;

/**
 * ThrottlerGuard with two throttlers: `default` per principal (see `rateLimitTracker`) and `company`, the
 * ceiling of the principal's company (anonymous requests have none), each in one bucket for all routes
 * and counting a route's `@RateLimitWeight`. It sets exactly the headers of `rateLimitHeaders` for the
 * most constraining of the two, once per response (the library's own handler would add a `Retry-After`
 * before the `X-RateLimit-*` ones and suffix them for named throttlers). A refusal is the library's
 * `ThrottlerException` (429); the headers are already on the response, so exception filters keep them.
 * `@SkipThrottle()`, `@Throttle()`, `skipIf`, `ignoreUserAgents` and custom trackers work as in the library.
 *
 * The library reads six metadata keys per throttler on every request and awaits each limit, window and
 * block; they are fixed once the classes are declared, so this guard reads them once per route (`RoutePlan`,
 * kept in a `PerRoute`) and awaits only numbers a function computes.
 *
 * Register it after the authentication guard so `request.user` is set:
 * `{ provide: APP_GUARD, useExisting: RateLimitGuard }` with `RateLimitModule` imported.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  private readonly plans = new PerRoute<RoutePlan>();

  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @InjectThrottlerStorage() storage: ThrottlerStorage,
    reflector: CachedReflector,
  ) {
    super(options, storage, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const plan = this.planOf(context.getClass(), context.getHandler());
    const { throttlers } = plan;
    const weight = typeof plan.weight === 'number' ? plan.weight : Math.max(1, plan.weight(context.switchToHttp().getRequest()));
    for (const route of throttlers) {
      const skipIf = route.throttler.skipIf ?? this.commonOptions.skipIf;
      if (skipIf?.(context)) continue;
      const { limit, ttl, blockDuration } = route.fixed ?? (await resolveValues(context, route));
      const { throttler, getTracker, generateKey } = route;
      await this.handleRequest({ context, limit, ttl, throttler, blockDuration, getTracker, generateKey, weight });
    }
    const { req, res } = this.getRequestResponse(context);
    const binding = (req as Record<symbol, BindingLimit | undefined>)[BINDING_LIMIT];
    if (binding !== undefined) this.setRateLimitHeaders(res, binding);
    return true;
  }

  protected override async getTracker(req: Record<string, any>): Promise<string> {
    return rateLimitTracker(req as TrackedRequest, this.ipv6SubnetPrefix);
  }

  /** One bucket per principal, not per route: the contract counts "per agent or per API key" (the storage keeps throttlers apart). */
  protected override generateKey(_context: ExecutionContext, tracker: string): string {
    return tracker;
  }

  /**
   * Counts the request against one throttler. An allowed request keeps, on the request, the limit with the
   * least left (its headers are set once all throttlers have counted); a refused one gets that throttler's
   * headers and `Retry-After` at once, then the 429.
   */
  protected override async handleRequest(request: WeightedThrottlerRequest): Promise<boolean> {
    const { context, limit, ttl, throttler, blockDuration, getTracker, generateKey, weight = 1 } = request;
    const { req, res } = this.getRequestResponse(context);

    const ignoreUserAgents = throttler.ignoreUserAgents ?? this.commonOptions.ignoreUserAgents;
    if (ignoreUserAgents !== undefined) {
      const userAgent = String(req.headers?.['user-agent'] ?? '');
      if (ignoreUserAgents.some((pattern) => pattern.test(userAgent))) return true;
    }

    const name = throttler.name ?? DEFAULT_THROTTLER;
    const companyId = (req as TrackedRequest).user?.companyId;
    if (name === COMPANY_THROTTLER && !companyId) return true;
    const tracker = name === COMPANY_THROTTLER ? `company:${companyId}` : await getTracker(req, context);
    const key = generateKey(context, tracker, name);
    const storage = this.storageService as SharedWindowThrottlerStorage;
    const record = await storage.increment(key, ttl, limit, blockDuration, name, Math.min(weight, limit));

    const setHeaders = throttler.setHeaders ?? this.commonOptions.setHeaders ?? true;
    const counted: BindingLimit = { policy: { name, limit, ttlMs: ttl }, record, remaining: record.isBlocked ? -1 : limit - record.totalHits };
    if (record.isBlocked) {
      if (setHeaders) this.setRateLimitHeaders(res, counted);
      await this.throwThrottlingException(context, { limit, ttl, key, tracker, ...record });
    }
    const binding = (req as Record<symbol, BindingLimit | undefined>)[BINDING_LIMIT];
    if (setHeaders && (binding === undefined || counted.remaining < binding.remaining)) {
      (req as Record<symbol, BindingLimit>)[BINDING_LIMIT] = counted;
    }
    return true;
  }

  protected override async getErrorMessage(context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<string> {
    if (!Array.isArray(this.options) && this.options.errorMessage) return super.getErrorMessage(context, detail);
    const seconds = retryAfterSeconds(detail);
    const whose = detail.key.startsWith(`${COMPANY_THROTTLER}:`) ? ' for this company' : '';
    return `Too many requests${whose}, retry after ${seconds} second${seconds === 1 ? '' : 's'}`;
  }

  private setRateLimitHeaders(res: Record<string, any>, { policy, record }: BindingLimit): void {
    for (const [header, value] of rateLimitHeaders(policy, record)) this.setResponseHeader(res, header, value);
  }

  /** The route's throttlers and weight, from its decorators, read on its first request. */
  private planOf(controller: Function, handler: Function): RoutePlan {
    return this.plans.get(controller, handler, () => this.readPlan([handler, controller]));
  }

  private readPlan(targets: [Function, Function]): RoutePlan {
    const read = <T>(key: string, name: string) => this.reflector.getAllAndOverride<T | undefined>(key + name, targets);
    const weight = this.reflector.getAllAndOverride<Weight | undefined>(WEIGHT, targets) ?? 1;
    if (read<boolean>(METADATA.skip, DEFAULT_THROTTLER) === true) return { throttlers: [], weight };
    const throttlers: RouteThrottler[] = [];
    for (const throttler of this.throttlers) {
      const name = throttler.name ?? DEFAULT_THROTTLER;
      if (read<boolean>(METADATA.skip, name) === true) continue;
      const limit = read<Resolvable<number>>(METADATA.limit, name) ?? throttler.limit;
      const ttl = read<Resolvable<number>>(METADATA.ttl, name) ?? throttler.ttl;
      const blockDuration = read<Resolvable<number>>(METADATA.blockDuration, name) ?? throttler.blockDuration;
      const fixed =
        typeof limit === 'number' && typeof ttl === 'number' && (blockDuration === undefined || typeof blockDuration === 'number')
          ? { limit, ttl, blockDuration: blockDuration ?? ttl }
          : undefined;
      throttlers.push({
        throttler,
        name,
        fixed,
        limit,
        ttl,
        blockDuration,
        getTracker: read<ThrottlerGetTrackerFunction>(METADATA.tracker, name) ?? throttler.getTracker ?? this.commonOptions.getTracker!,
        generateKey: read<ThrottlerGenerateKeyFunction>(METADATA.keyGenerator, name) ?? throttler.generateKey ?? this.commonOptions.generateKey!,
      });
    }
    return { throttlers, weight };
  }
}

/** A route's limit, window and block for this request, where one is given as a function or a numeric string. */
async function resolveValues(context: ExecutionContext, route: RouteThrottler): Promise<ThrottlerValues> {
  const limit = await resolveNumber(context, route.limit, 'limit', route.name);
  const ttl = await resolveNumber(context, route.ttl, 'ttl', route.name);
  const blockDuration = route.blockDuration === undefined ? ttl : await resolveNumber(context, route.blockDuration, 'blockDuration', route.name);
  return { limit, ttl, blockDuration };
}

async function resolveNumber(context: ExecutionContext, value: Resolvable<number>, option: string, throttler: string): Promise<number> {
  const resolved: unknown = typeof value === 'function' ? await value(context) : value;
  const number = typeof resolved === 'string' && resolved.trim() !== '' ? Number(resolved) : resolved;
  if (typeof number !== 'number' || Number.isNaN(number)) {
    throw new Error(`Invalid "${option}" for the "${throttler}" throttler: expected a number, got ${JSON.stringify(resolved)}.`);
  }
  return number;
}
