import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { AppConfig, type LogLevel, type MetricsConfig, type NodeEnv } from './app-config.js';
import { ConfigurationError, ConfigurationErrors } from './configuration-error.js';
import { PROJECT_ROOT } from './project-root.js';
import { POLL_INTERVAL_MS } from '../lanes/poll-interval.js';
import { corsOrigins, trustProxy, webhookSecretKeys } from './security-variables.js';

export { ConfigurationError, ConfigurationErrors };

type Env = Record<string, string | undefined>;

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const NODE_ENVS: readonly NodeEnv[] = ['development', 'production', 'test'];
const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
export const MIN_PRODUCTION_SECRET_LENGTH = 32;
/** OWASP's current minimum for scrypt is N = 2^17 (r = 8, p = 1). */
export const MIN_PRODUCTION_SCRYPT_LOG_N = 17;
/** Kept answers of idempotent requests live at most 30 days: they are a retry window, not an archive. */
const MAX_IDEMPOTENCY_TTL_HOURS = 720;
/** An upload no message refers to is kept at most 30 days: it is a hand-over, not storage. */
const MAX_MEDIA_UPLOAD_TTL_HOURS = 720;
/** The old generation may grow to 2.5× what the last full collection kept (docs/performance.md, "Memory"). */
const DEFAULT_HEAP_GROWTH_PERCENT = 100;
/** `data/` beside the project, wherever the process was started from. */
export const DEFAULT_EMBEDDED_DATA_DIR = join(PROJECT_ROOT, 'data');
const IN_MEMORY = 'memory';

function raw(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const value = raw(env, name);
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigurationError(name, `must be an integer from ${min} to ${max}`, value);
  }
  return Number(value);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (value !== 'true' && value !== 'false') throw new ConfigurationError(name, 'must be "true" or "false"', value);
  return value === 'true';
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const value = raw(env, name)?.toLowerCase();
  if (value === undefined) return fallback;
  if (!allowed.includes(value as T)) throw new ConfigurationError(name, `must be one of ${allowed.join(', ')}`, value);
  return value as T;
}

/** "3600", "90s", "15m", "1h", "7d" → seconds. */
function duration(env: Env, name: string, fallback: string): number {
  const value = raw(env, name) ?? fallback;
  const match = /^(\d+)([smhd]?)$/.exec(value);
  if (!match || Number(match[1]) === 0) {
    throw new ConfigurationError(name, 'must be a positive duration such as 3600, 90s, 15m, 1h or 7d', value);
  }
  return Number(match[1]) * (DURATION_UNITS[match[2]] ?? 1);
}

function mongodbUri(env: Env, production: boolean): string | undefined {
  const value = raw(env, 'MONGODB_URI');
  if (value === undefined) {
    if (production) throw new ConfigurationError('MONGODB_URI', 'is required when NODE_ENV=production');
    return undefined;
  }
  if (!/^mongodb(\+srv)?:\/\/[^\s]+$/.test(value)) {
    throw new ConfigurationError('MONGODB_URI', 'must be a mongodb:// or mongodb+srv:// URI');
  }
  return value;
}

/**
 * The embedded engine's data directory (absolute), or undefined for "memory": its data then ends with the process.
 * Default: `data/` beside the project, or memory under NODE_ENV=test.
 */
function embeddedDataDir(env: Env, nodeEnv: NodeEnv): string | undefined {
  const value = raw(env, 'EMBEDDED_DATA_DIR');
  // Tests get a fresh engine each: a test process must never open (nor lock) the data of `npm start`.
  if (value === undefined) return nodeEnv === 'test' ? undefined : DEFAULT_EMBEDDED_DATA_DIR;
  if (value.toLowerCase() === IN_MEMORY) return undefined;
  if (value.includes('\0')) throw new ConfigurationError('EMBEDDED_DATA_DIR', `must be a directory path or "${IN_MEMORY}"`);
  return resolve(value);
}

function jwtSecret(env: Env, production: boolean): { secret: string; generated: boolean } {
  const value = raw(env, 'JWT_SECRET');
  if (value === undefined) {
    if (production) throw new ConfigurationError('JWT_SECRET', 'is required when NODE_ENV=production');
    return { secret: randomBytes(32).toString('base64url'), generated: true };
  }
  if (production && value.length < MIN_PRODUCTION_SECRET_LENGTH) {
    throw new ConfigurationError('JWT_SECRET', `must be at least ${MIN_PRODUCTION_SECRET_LENGTH} characters when NODE_ENV=production`);
  }
  return { secret: value, generated: false };
}

function jwtMaxAge(env: Env, expiresIn: number): number {
  const maxAge = duration(env, 'JWT_MAX_AGE', String(expiresIn));
  if (maxAge < expiresIn) {
    throw new ConfigurationError('JWT_MAX_AGE', `must be at least JWT_EXPIRES_IN (${expiresIn} s)`, raw(env, 'JWT_MAX_AGE'));
  }
  return maxAge;
}

function secretKeys(env: Env, production: boolean) {
  const keys = webhookSecretKeys(raw(env, 'WEBHOOK_SECRET_KEYS'));
  if (production && keys.length === 0) throw new ConfigurationError('WEBHOOK_SECRET_KEYS', 'is required when NODE_ENV=production');
  return keys;
}

/** A bearer token anyone who reads the metrics must hold: long enough not to be guessed. */
const MIN_METRICS_TOKEN_LENGTH = 16;

function metrics(env: Env, production: boolean): MetricsConfig {
  const port = raw(env, 'METRICS_PORT') === undefined ? undefined : integer(env, 'METRICS_PORT', 0, 0, 65535);
  const token = raw(env, 'METRICS_TOKEN');
  if (token !== undefined && token.length < MIN_METRICS_TOKEN_LENGTH) {
    throw new ConfigurationError('METRICS_TOKEN', `must be at least ${MIN_METRICS_TOKEN_LENGTH} characters`);
  }
  if (port !== undefined && port !== 0 && String(port) === (raw(env, 'PORT') ?? '3000')) {
    throw new ConfigurationError('METRICS_PORT', 'must differ from PORT', String(port));
  }
  return { enabled: port !== undefined || token !== undefined || !production, token, port };
}

function otlpEndpoint(env: Env): string | undefined {
  const value = raw(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (value === undefined) return undefined;
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new ConfigurationError('OTEL_EXPORTER_OTLP_ENDPOINT', 'must be an http:// or https:// URL', value);
  }
  return value;
}

/**
 * Validates every variable of contract section 1. Every bad one is reported at once: a ConfigurationErrors
 * (a ConfigurationError) whose `problems` name each, one line each.
 */
export function loadAppConfig(env: Env = process.env): AppConfig {
  const errors: ConfigurationError[] = [];
  // Reads one value; a bad one is noted and the reading goes on (the undefined it gives is never used: the
  // configuration is refused below), so values derived from it are not checked against a guess.
  const check = <T>(read: () => T): T => {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigurationError)) throw error;
      errors.push(error);
      return undefined as T;
    }
  };
  const nodeEnv = check(() => oneOf(env, 'NODE_ENV', NODE_ENVS, 'development')) ?? 'development';
  const production = nodeEnv === 'production';
  const { secret, generated } = check(() => jwtSecret(env, production)) ?? { secret: '', generated: false };
  const jwtExpiresInSeconds = check(() => duration(env, 'JWT_EXPIRES_IN', '1h'));
  const throttleLimit = check(() => integer(env, 'THROTTLE_LIMIT', 300, 1));
  const values: AppConfig = {
    nodeEnv,
    port: check(() => integer(env, 'PORT', 3000, 0, 65535)),
    mongodbUri: check(() => mongodbUri(env, production)),
    embeddedDataDir: check(() => embeddedDataDir(env, nodeEnv)),
    jwtSecret: secret,
    jwtSecretGenerated: generated,
    jwtExpiresInSeconds,
    jwtMaxAgeSeconds: jwtExpiresInSeconds === undefined ? 0 : check(() => jwtMaxAge(env, jwtExpiresInSeconds)),
    throttleLimit,
    throttleTtlMs: check(() => integer(env, 'THROTTLE_TTL_MS', 60_000, 1)),
    throttleCompanyLimit: check(() => integer(env, 'THROTTLE_COMPANY_LIMIT', 10 * (throttleLimit ?? 1), 1)),
    authFailureLimit: check(() => integer(env, 'AUTH_FAILURE_LIMIT', 20, 1)),
    throttleSyncMs: check(() => integer(env, 'THROTTLE_SYNC_MS', 500, 10, 60_000)),
    trustProxy: check(() => trustProxy(raw(env, 'TRUST_PROXY'))),
    corsOrigins: check(() => corsOrigins(raw(env, 'CORS_ORIGINS'))),
    apiKeysPerCompany: check(() => integer(env, 'API_KEYS_PER_COMPANY', 20, 1, 1000)),
    passwordScryptLogN: check(() =>
      integer(env, 'PASSWORD_SCRYPT_LOG_N', MIN_PRODUCTION_SCRYPT_LOG_N, production ? MIN_PRODUCTION_SCRYPT_LOG_N : 10, 20),
    ),
    mediaMaxBytes: check(() => integer(env, 'MEDIA_MAX_BYTES', 16 * 1024 * 1024, 1)),
    // At most 7 days, as S3's presigned URLs: a link is a bearer credential for the file while it lasts.
    mediaUrlTtlSeconds: check(() => integer(env, 'MEDIA_URL_TTL_SECONDS', 3600, 1, 7 * 86_400)),
    mediaUploadTtlHours: check(() => integer(env, 'MEDIA_UPLOAD_TTL_HOURS', 24, 1, MAX_MEDIA_UPLOAD_TTL_HOURS)),
    webhookAllowPrivateUrls: check(() => boolean(env, 'WEBHOOK_ALLOW_PRIVATE_URLS', !production)),
    webhookTimeoutMs: check(() => integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 1)),
    webhookSecretKeys: check(() => secretKeys(env, production)),
    idempotencyTtlHours: check(() => integer(env, 'IDEMPOTENCY_TTL_HOURS', 24, 1, MAX_IDEMPOTENCY_TTL_HOURS)),
    logLevel: check(() => oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info')),
    demoSeed: check(() => boolean(env, 'DEMO_SEED', true)),
    allowRegistration: check(() => boolean(env, 'ALLOW_REGISTRATION', !production)),
    docsEnabled: check(() => boolean(env, 'DOCS_ENABLED', !production)),
    eventRetentionDays: check(() => integer(env, 'EVENT_RETENTION_DAYS', 30, 1, 3650)),
    contactMergeUndoDays: check(() => integer(env, 'CONTACT_MERGE_UNDO_DAYS', 30, 0, 3650)),
    auditRetentionDays: check(() => integer(env, 'AUDIT_RETENTION_DAYS', 365, 1, 3650)),
    privacyEraseDelayHours: check(() => integer(env, 'PRIVACY_ERASE_DELAY_HOURS', 0, 0, 720)),
    eventStreamsPerCompany: check(() => integer(env, 'EVENT_STREAMS_PER_COMPANY', 20, 1, 10_000)),
    eventStreamsPerPrincipal: check(() => integer(env, 'EVENT_STREAMS_PER_PRINCIPAL', 5, 1, 10_000)),
    // At most 15 s: the contract promises a keep-alive at least that often; at least the scheduler's poll, on
    // which keep-alives are written.
    eventStreamKeepAliveMs: check(() => integer(env, 'EVENT_STREAM_KEEPALIVE_MS', 15_000, POLL_INTERVAL_MS, 15_000)),
    eventStreamMaxBufferBytes: check(() => integer(env, 'EVENT_STREAM_MAX_BUFFER_BYTES', 1024 * 1024, 1024)),
    // At most 5 s: with the caches' 2 s across processes, a stream ends within 10 s of its credential (contract 18).
    eventStreamAuthCheckMs: check(() => integer(env, 'EVENT_STREAM_AUTH_CHECK_MS', 5_000, POLL_INTERVAL_MS, 5_000)),
    webhookDeliveryRetentionDays: check(() => integer(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 0, 3650)),
    flowExecutionRetentionDays: check(() => integer(env, 'FLOW_EXECUTION_RETENTION_DAYS', 30, 0, 3650)),
    heapGrowthPercent: check(() => integer(env, 'HEAP_GROWTH_PERCENT', DEFAULT_HEAP_GROWTH_PERCENT, 0, 1000)),
    metrics: check(() => metrics(env, production)),
    otlpEndpoint: check(() => otlpEndpoint(env)),
  };
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new ConfigurationErrors(errors);
  return new AppConfig(values);
}
