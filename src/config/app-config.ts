import type { TrustProxy, WebhookSecretKey } from './security-variables.js';

export type NodeEnv = 'development' | 'production' | 'test';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

/**
 * GET /metrics: `port` serves it on a listener of its own (not on the API's port); otherwise on the API's port, behind
 * `token` (a bearer token) when set; `enabled` is false in production unless one of them is set.
 */
export interface MetricsConfig {
  enabled: boolean;
  token?: string;
  port?: number;
}

/**
 * The validated configuration (contract section 1). Injected by class token:
 * `constructor(private readonly config: AppConfig)`.
 */
export class AppConfig {
  readonly nodeEnv: NodeEnv;
  readonly port: number;
  /** Unset: the embedded MongoDB-compatible engine is started in-process. */
  readonly mongodbUri?: string;
  /** Where the embedded engine keeps its data when MONGODB_URI is unset; undefined: in memory only. */
  readonly embeddedDataDir?: string;
  readonly jwtSecret: string;
  /** True when JWT_SECRET was unset outside production and a random one was made (or read from jwtSecretFile). */
  readonly jwtSecretGenerated: boolean;
  /** Where the generated secret is kept: the data directory (keepDevelopmentSecret); unset: it ends with the process. */
  readonly jwtSecretFile?: string;
  readonly jwtExpiresInSeconds: number;
  /** The oldest token (by `iat`) accepted, whatever its `exp` says. */
  readonly jwtMaxAgeSeconds: number;
  /** Per agent, per API key, or per anonymous address, in each window. */
  readonly throttleLimit: number;
  readonly throttleTtlMs: number;
  /** Per company in each window, all its agents and keys together. */
  readonly throttleCompanyLimit: number;
  /** Failed authentications (login, bad token, bad key) per client address in each window. */
  readonly authFailureLimit: number;
  /** How stale a process's view of the shared rate-limit counters may grow while requests arrive. */
  readonly throttleSyncMs: number;
  readonly trustProxy: TrustProxy;
  /** The browser origins allowed to call the API (CORS); empty: none. */
  readonly corsOrigins: string[];
  /** The most API keys a company may hold that are neither revoked nor expired. */
  readonly apiKeysPerCompany: number;
  /** scrypt cost: N = 2^passwordScryptLogN (r = 8, p = 1). */
  readonly passwordScryptLogN: number;
  readonly mediaMaxBytes: number;
  /** How long a signed media `downloadUrl` of a REST answer serves the file without credentials. */
  readonly mediaUrlTtlSeconds: number;
  /** How long a file uploaded through Interface B waits for a message to refer to it before it is removed. */
  readonly mediaUploadTtlHours: number;
  readonly webhookAllowPrivateUrls: boolean;
  readonly webhookTimeoutMs: number;
  /** Empty: webhook secrets are sealed under a key derived from JWT_SECRET (never in production). */
  readonly webhookSecretKeys: WebhookSecretKey[];
  /** How long the answer to a request sent with an Idempotency-Key is kept for a retry. */
  readonly idempotencyTtlHours: number;
  readonly logLevel: LogLevel;
  readonly demoSeed: boolean;
  readonly allowRegistration: boolean;
  /** How long the event log keeps an event (the feed answers 410 for a cursor older than that). */
  readonly eventRetentionDays: number;
  /** How long a contact merge can be undone (contract section 22). */
  readonly contactMergeUndoDays: number;
  /** How long the audit log keeps an entry (contract section 23). */
  readonly auditRetentionDays: number;
  /** How long an erasure waits before it is carried out (it can be cancelled meanwhile). */
  readonly privacyEraseDelayHours: number;
  /** Open event streams a company may hold at once, across the deployment's processes. */
  readonly eventStreamsPerCompany: number;
  /** Of those, the most one agent or API key may hold, so that one cannot lock the others out. */
  readonly eventStreamsPerPrincipal: number;
  /** Longest silence on an open event stream before a `: keep-alive` comment. */
  readonly eventStreamKeepAliveMs: number;
  /** Bytes a live event stream may leave unread before it is disconnected (the client resumes with Last-Event-ID). */
  readonly eventStreamMaxBufferBytes: number;
  /** How often an open event stream's credential is checked again; the stream ends when it no longer holds. */
  readonly eventStreamAuthCheckMs: number;
  /** How long a finished webhook delivery is kept; 0: for ever. */
  readonly webhookDeliveryRetentionDays: number;
  /** How long a finished flow execution is kept; 0: for ever. */
  readonly flowExecutionRetentionDays: number;
  /** How far past what the last full collection kept V8 lets the old generation grow; 0: V8's own policy. */
  readonly heapGrowthPercent: number;
  /** Swagger UI at /docs and the OpenAPI document at /docs-json. */
  readonly docsEnabled: boolean;
  /** Where GET /metrics is served: on the API's port, on a port of its own, or not at all. */
  readonly metrics: MetricsConfig;
  /** OTLP/HTTP endpoint traces are exported to; unset: no tracing. */
  readonly otlpEndpoint?: string;

  constructor(values: AppConfig) {
    Object.assign(this, values);
  }
}
