import { describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { ConfigurationError, ConfigurationErrors, DEFAULT_EMBEDDED_DATA_DIR, loadAppConfig } from './environment.js';

const STRONG_SECRET = 'x'.repeat(32);
const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64url');
const PRODUCTION = { NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/p', JWT_SECRET: STRONG_SECRET, WEBHOOK_SECRET_KEYS: `k1:${KEY_A}` };

function failure(env: Record<string, string>): string {
  try {
    loadAppConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigurationError);
    return (error as Error).message;
  }
  throw new Error('expected a ConfigurationError');
}

describe('loadAppConfig', () => {
  it('applies the contract defaults', () => {
    const config = loadAppConfig({});
    expect(config).toMatchObject({
      nodeEnv: 'development',
      port: 3000,
      mongodbUri: undefined,
      embeddedDataDir: DEFAULT_EMBEDDED_DATA_DIR,
      jwtSecretGenerated: true,
      jwtExpiresInSeconds: 3600,
      throttleLimit: 300,
      throttleTtlMs: 60_000,
      mediaMaxBytes: 16 * 1024 * 1024,
      mediaUrlTtlSeconds: 3600,
      mediaUploadTtlHours: 24,
      webhookAllowPrivateUrls: true,
      webhookTimeoutMs: 10_000,
      idempotencyTtlHours: 24,
      logLevel: 'info',
      demoSeed: true,
      allowRegistration: true,
      docsEnabled: true,
      jwtMaxAgeSeconds: 3600,
      throttleCompanyLimit: 3000,
      authFailureLimit: 20,
      throttleSyncMs: 500,
      trustProxy: false,
      apiKeysPerCompany: 20,
      passwordScryptLogN: 17,
      webhookSecretKeys: [],
      eventStreamsPerCompany: 20,
      eventStreamKeepAliveMs: 15_000,
      eventStreamMaxBufferBytes: 1024 * 1024,
      eventStreamAuthCheckMs: 5_000,
      heapGrowthPercent: 100,
    });
    expect(config.jwtSecret.length).toBeGreaterThanOrEqual(32);
    expect(DEFAULT_EMBEDDED_DATA_DIR).toBe(resolve('data')); // jest runs in the project's directory
  });

  it('reads EMBEDDED_DATA_DIR as a path from the working directory, or "memory" (the default under NODE_ENV=test)', () => {
    expect(loadAppConfig({ EMBEDDED_DATA_DIR: 'var/parley' }).embeddedDataDir).toBe(resolve('var/parley'));
    expect(loadAppConfig({ EMBEDDED_DATA_DIR: '/srv/parley-data' }).embeddedDataDir).toBe('/srv/parley-data');
    expect(loadAppConfig({ EMBEDDED_DATA_DIR: 'Memory' }).embeddedDataDir).toBeUndefined();
    expect(loadAppConfig({ NODE_ENV: 'test' }).embeddedDataDir).toBeUndefined();
    expect(loadAppConfig({ NODE_ENV: 'test', EMBEDDED_DATA_DIR: 'var/parley' }).embeddedDataDir).toBe(resolve('var/parley'));
    expect(failure({ EMBEDDED_DATA_DIR: 'bad\0path' })).toBe('EMBEDDED_DATA_DIR must be a directory path or "memory"');
  });

  it('reads every variable', () => {
    const config = loadAppConfig({
      PORT: '8080',
      MONGODB_URI: 'mongodb://db:27017/parley',
      JWT_SECRET: 'secret',
      JWT_EXPIRES_IN: '15m',
      THROTTLE_LIMIT: '10',
      THROTTLE_TTL_MS: '1000',
      MEDIA_MAX_BYTES: '1024',
      MEDIA_URL_TTL_SECONDS: '900',
      MEDIA_UPLOAD_TTL_HOURS: '2',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
      WEBHOOK_TIMEOUT_MS: '500',
      IDEMPOTENCY_TTL_HOURS: '48',
      LOG_LEVEL: 'DEBUG',
      DEMO_SEED: 'false',
      ALLOW_REGISTRATION: 'false',
      DOCS_ENABLED: 'false',
      JWT_MAX_AGE: '1h',
      THROTTLE_COMPANY_LIMIT: '50',
      AUTH_FAILURE_LIMIT: '7',
      THROTTLE_SYNC_MS: '250',
      TRUST_PROXY: '2',
      API_KEYS_PER_COMPANY: '3',
      PASSWORD_SCRYPT_LOG_N: '15',
      WEBHOOK_SECRET_KEYS: `new:${KEY_B}, old:${KEY_A}`,
      EVENT_STREAMS_PER_COMPANY: '5',
      EVENT_STREAM_KEEPALIVE_MS: '5000',
      EVENT_STREAM_MAX_BUFFER_BYTES: '65536',
      EVENT_STREAM_AUTH_CHECK_MS: '1000',
      HEAP_GROWTH_PERCENT: '0',
    });
    expect(config).toMatchObject({
      port: 8080,
      mongodbUri: 'mongodb://db:27017/parley',
      jwtSecret: 'secret',
      jwtSecretGenerated: false,
      jwtExpiresInSeconds: 900,
      throttleLimit: 10,
      throttleTtlMs: 1000,
      mediaMaxBytes: 1024,
      mediaUrlTtlSeconds: 900,
      mediaUploadTtlHours: 2,
      webhookAllowPrivateUrls: false,
      webhookTimeoutMs: 500,
      idempotencyTtlHours: 48,
      logLevel: 'debug',
      demoSeed: false,
      allowRegistration: false,
      docsEnabled: false,
      jwtMaxAgeSeconds: 3600,
      throttleCompanyLimit: 50,
      authFailureLimit: 7,
      throttleSyncMs: 250,
      trustProxy: 2,
      apiKeysPerCompany: 3,
      passwordScryptLogN: 15,
      eventStreamsPerCompany: 5,
      eventStreamKeepAliveMs: 5000,
      eventStreamMaxBufferBytes: 65536,
      eventStreamAuthCheckMs: 1000,
      heapGrowthPercent: 0,
    });
    expect(config.webhookSecretKeys).toEqual([
      { id: 'new', key: Buffer.alloc(32, 2) },
      { id: 'old', key: Buffer.alloc(32, 1) },
    ]);
  });

  it('reads TRUST_PROXY with Express semantics: false, a hop count, or proxy addresses and subnets', () => {
    expect(loadAppConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadAppConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadAppConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadAppConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,2001:db8::/32 ,192.0.2.7' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      '2001:db8::/32',
      '192.0.2.7',
    ]);
  });

  it('defaults the token max age to the token lifetime, and refuses a shorter one', () => {
    expect(loadAppConfig({ JWT_EXPIRES_IN: '2h' }).jwtMaxAgeSeconds).toBe(7200);
    expect(failure({ JWT_EXPIRES_IN: '2h', JWT_MAX_AGE: '1h' })).toBe('JWT_MAX_AGE must be at least JWT_EXPIRES_IN (7200 s) (got "1h")');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535 (got "eighty")'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535 (got "70000")'],
    [{ THROTTLE_LIMIT: '0' }, 'THROTTLE_LIMIT must be an integer from 1'],
    [{ THROTTLE_TTL_MS: '-5' }, 'THROTTLE_TTL_MS must be an integer from 1'],
    [{ MEDIA_MAX_BYTES: '1.5' }, 'MEDIA_MAX_BYTES must be an integer from 1'],
    [{ MEDIA_URL_TTL_SECONDS: '0' }, 'MEDIA_URL_TTL_SECONDS must be an integer from 1 to 604800'],
    [{ MEDIA_URL_TTL_SECONDS: '604801' }, 'MEDIA_URL_TTL_SECONDS must be an integer from 1 to 604800'],
    [{ WEBHOOK_TIMEOUT_MS: 'soon' }, 'WEBHOOK_TIMEOUT_MS must be an integer from 1'],
    [{ MEDIA_UPLOAD_TTL_HOURS: '0' }, 'MEDIA_UPLOAD_TTL_HOURS must be an integer from 1 to 720 (got "0")'],
    [{ MEDIA_UPLOAD_TTL_HOURS: '24h' }, 'MEDIA_UPLOAD_TTL_HOURS must be an integer from 1 to 720 (got "24h")'],
    [{ IDEMPOTENCY_TTL_HOURS: '0' }, 'IDEMPOTENCY_TTL_HOURS must be an integer from 1 to 720 (got "0")'],
    [{ IDEMPOTENCY_TTL_HOURS: '721' }, 'IDEMPOTENCY_TTL_HOURS must be an integer from 1 to 720 (got "721")'],
    [{ HEAP_GROWTH_PERCENT: '1001' }, 'HEAP_GROWTH_PERCENT must be an integer from 0 to 1000 (got "1001")'],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE_URLS must be "true" or "false" (got "yes")'],
    [{ DEMO_SEED: '1' }, 'DEMO_SEED must be "true" or "false"'],
    [{ ALLOW_REGISTRATION: 'no' }, 'ALLOW_REGISTRATION must be "true" or "false"'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    [{ JWT_EXPIRES_IN: '1w' }, 'JWT_EXPIRES_IN must be a positive duration'],
    [{ TRUST_PROXY: 'true' }, 'TRUST_PROXY must not be "true"'],
    [{ TRUST_PROXY: '10.0.0.0/33' }, 'TRUST_PROXY must be false, a hop count, or a comma-separated list of IP addresses and CIDR subnets (got "10.0.0.0/33")'],
    [{ TRUST_PROXY: 'proxy.internal' }, 'TRUST_PROXY must be false, a hop count'],
    [{ TRUST_PROXY: '99' }, 'TRUST_PROXY must be a hop count from 0 to 10'],
    [{ DOCS_ENABLED: 'maybe' }, 'DOCS_ENABLED must be "true" or "false"'],
    [{ THROTTLE_COMPANY_LIMIT: '0' }, 'THROTTLE_COMPANY_LIMIT must be an integer from 1'],
    [{ AUTH_FAILURE_LIMIT: 'x' }, 'AUTH_FAILURE_LIMIT must be an integer from 1'],
    [{ THROTTLE_SYNC_MS: '5' }, 'THROTTLE_SYNC_MS must be an integer from 10 to 60000'],
    [{ API_KEYS_PER_COMPANY: '0' }, 'API_KEYS_PER_COMPANY must be an integer from 1 to 1000'],
    [{ PASSWORD_SCRYPT_LOG_N: '21' }, 'PASSWORD_SCRYPT_LOG_N must be an integer from 10 to 20'],
    [{ WEBHOOK_SECRET_KEYS: 'nokey' }, 'WEBHOOK_SECRET_KEYS must be a comma-separated list of id:base64key'],
    [{ WEBHOOK_SECRET_KEYS: 'k1:c2hvcnQ=' }, 'WEBHOOK_SECRET_KEYS key "k1" must be 32 bytes in base64'],
    [{ WEBHOOK_SECRET_KEYS: `k1:${KEY_A},k1:${KEY_B}` }, 'WEBHOOK_SECRET_KEYS lists the key id "k1" twice'],
    [{ WEBHOOK_SECRET_KEYS: `bad id:${KEY_A}` }, 'WEBHOOK_SECRET_KEYS must be a comma-separated list'],
    [{ JWT_EXPIRES_IN: '0' }, 'JWT_EXPIRES_IN must be a positive duration'],
    [{ MONGODB_URI: 'postgres://db' }, 'MONGODB_URI must be a mongodb:// or mongodb+srv:// URI'],
    [{ EVENT_STREAMS_PER_COMPANY: '0' }, 'EVENT_STREAMS_PER_COMPANY must be an integer from 1 to 10000'],
    [{ EVENT_STREAM_KEEPALIVE_MS: '20000' }, 'EVENT_STREAM_KEEPALIVE_MS must be an integer from 250 to 15000'],
    [{ EVENT_STREAM_MAX_BUFFER_BYTES: '1k' }, 'EVENT_STREAM_MAX_BUFFER_BYTES must be an integer from 1024'],
    [{ EVENT_STREAM_AUTH_CHECK_MS: '10000' }, 'EVENT_STREAM_AUTH_CHECK_MS must be an integer from 250 to 5000'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test (got "staging")'],
  ])('refuses %j with one line naming the variable', (env, message) => {
    const text = failure(env);
    expect(text).toContain(message);
    expect(text).not.toContain('\n');
  });

  it('does not echo a bad MONGODB_URI, which may hold a password', () => {
    expect(failure({ MONGODB_URI: 'http://user:hunter2@db' })).not.toContain('hunter2');
  });

  it('names every bad variable in one run, one line each', () => {
    let error: unknown;
    try {
      loadAppConfig({ NODE_ENV: 'production', PORT: 'eighty', JWT_EXPIRES_IN: '1w', JWT_MAX_AGE: '1s', LOG_LEVEL: 'loud' });
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(ConfigurationErrors);
    expect(error).toBeInstanceOf(ConfigurationError);
    const problems = (error as ConfigurationErrors).problems;
    expect(problems).toEqual([
      'JWT_SECRET is required when NODE_ENV=production',
      'JWT_EXPIRES_IN must be a positive duration such as 3600, 90s, 15m, 1h or 7d (got "1w")',
      'PORT must be an integer from 0 to 65535 (got "eighty")',
      'MONGODB_URI is required when NODE_ENV=production',
      'WEBHOOK_SECRET_KEYS is required when NODE_ENV=production',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ]);
    // JWT_MAX_AGE is checked against JWT_EXPIRES_IN only when that one is good: no guess is reported as a problem.
    expect((error as Error).message).toBe(problems.join('\n'));
  });

  describe('NODE_ENV=production', () => {
    it('requires MONGODB_URI', () => {
      expect(failure({ NODE_ENV: 'production', JWT_SECRET: STRONG_SECRET, WEBHOOK_SECRET_KEYS: `k1:${KEY_A}` })).toBe(
        'MONGODB_URI is required when NODE_ENV=production',
      );
    });

    it('requires a JWT_SECRET of at least 32 characters', () => {
      const uri = { NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/parley', WEBHOOK_SECRET_KEYS: `k1:${KEY_A}` };
      expect(failure(uri)).toBe('JWT_SECRET is required when NODE_ENV=production');
      expect(failure({ ...uri, JWT_SECRET: 'x'.repeat(31) })).toBe(
        'JWT_SECRET must be at least 32 characters when NODE_ENV=production',
      );
      expect(loadAppConfig({ ...uri, JWT_SECRET: STRONG_SECRET }).jwtSecret).toBe(STRONG_SECRET);
    });

    it('refuses private webhook targets, closes registration and docs, by default; each can be turned on', () => {
      expect(loadAppConfig(PRODUCTION)).toMatchObject({ webhookAllowPrivateUrls: false, allowRegistration: false, docsEnabled: false });
      expect(loadAppConfig({ ...PRODUCTION, ALLOW_REGISTRATION: 'true', DOCS_ENABLED: 'true' })).toMatchObject({ allowRegistration: true, docsEnabled: true });
    });

    it('requires WEBHOOK_SECRET_KEYS, and scrypt at N = 2^17 or more', () => {
      const { WEBHOOK_SECRET_KEYS: _keys, ...withoutKeys } = PRODUCTION;
      expect(failure(withoutKeys)).toBe('WEBHOOK_SECRET_KEYS is required when NODE_ENV=production');
      expect(failure({ ...PRODUCTION, PASSWORD_SCRYPT_LOG_N: '16' })).toBe('PASSWORD_SCRYPT_LOG_N must be an integer from 17 to 20 (got "16")');
    });
  });
});
