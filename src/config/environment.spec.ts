import { describe, expect, it } from '@jest/globals';
import { ConfigurationError, loadAppConfig } from './environment.js';

const STRONG_SECRET = 'x'.repeat(32);

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
      jwtSecretGenerated: true,
      jwtExpiresInSeconds: 3600,
      throttleLimit: 300,
      throttleTtlMs: 60_000,
      mediaMaxBytes: 16 * 1024 * 1024,
      webhookAllowPrivateUrls: true,
      webhookTimeoutMs: 10_000,
      idempotencyTtlHours: 24,
      logLevel: 'info',
      demoSeed: true,
      allowRegistration: true,
    });
    expect(config.jwtSecret.length).toBeGreaterThanOrEqual(32);
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
      WEBHOOK_ALLOW_PRIVATE_URLS: 'false',
      WEBHOOK_TIMEOUT_MS: '500',
      IDEMPOTENCY_TTL_HOURS: '48',
      LOG_LEVEL: 'DEBUG',
      DEMO_SEED: 'false',
      ALLOW_REGISTRATION: 'false',
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
      webhookAllowPrivateUrls: false,
      webhookTimeoutMs: 500,
      idempotencyTtlHours: 48,
      logLevel: 'debug',
      demoSeed: false,
      allowRegistration: false,
    });
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535 (got "eighty")'],
    [{ PORT: '70000' }, 'PORT must be an integer from 0 to 65535 (got "70000")'],
    [{ THROTTLE_LIMIT: '0' }, 'THROTTLE_LIMIT must be an integer from 1'],
    [{ THROTTLE_TTL_MS: '-5' }, 'THROTTLE_TTL_MS must be an integer from 1'],
    [{ MEDIA_MAX_BYTES: '1.5' }, 'MEDIA_MAX_BYTES must be an integer from 1'],
    [{ WEBHOOK_TIMEOUT_MS: 'soon' }, 'WEBHOOK_TIMEOUT_MS must be an integer from 1'],
    [{ IDEMPOTENCY_TTL_HOURS: '0' }, 'IDEMPOTENCY_TTL_HOURS must be an integer from 1 to 720 (got "0")'],
    [{ IDEMPOTENCY_TTL_HOURS: '721' }, 'IDEMPOTENCY_TTL_HOURS must be an integer from 1 to 720 (got "721")'],
    [{ WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' }, 'WEBHOOK_ALLOW_PRIVATE_URLS must be "true" or "false" (got "yes")'],
    [{ DEMO_SEED: '1' }, 'DEMO_SEED must be "true" or "false"'],
    [{ ALLOW_REGISTRATION: 'no' }, 'ALLOW_REGISTRATION must be "true" or "false"'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
    [{ JWT_EXPIRES_IN: '1w' }, 'JWT_EXPIRES_IN must be a positive duration'],
    [{ JWT_EXPIRES_IN: '0' }, 'JWT_EXPIRES_IN must be a positive duration'],
    [{ MONGODB_URI: 'postgres://db' }, 'MONGODB_URI must be a mongodb:// or mongodb+srv:// URI'],
    [{ NODE_ENV: 'staging' }, 'NODE_ENV must be one of development, production, test (got "staging")'],
  ])('refuses %j with one line naming the variable', (env, message) => {
    const text = failure(env);
    expect(text).toContain(message);
    expect(text).not.toContain('\n');
  });

  it('does not echo a bad MONGODB_URI, which may hold a password', () => {
    expect(failure({ MONGODB_URI: 'http://user:hunter2@db' })).not.toContain('hunter2');
  });

  describe('NODE_ENV=production', () => {
    it('requires MONGODB_URI', () => {
      expect(failure({ NODE_ENV: 'production', JWT_SECRET: STRONG_SECRET })).toBe(
        'MONGODB_URI is required when NODE_ENV=production',
      );
    });

    it('requires a JWT_SECRET of at least 32 characters', () => {
      const uri = { NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/parley' };
      expect(failure(uri)).toBe('JWT_SECRET is required when NODE_ENV=production');
      expect(failure({ ...uri, JWT_SECRET: 'x'.repeat(31) })).toBe(
        'JWT_SECRET must be at least 32 characters when NODE_ENV=production',
      );
      expect(loadAppConfig({ ...uri, JWT_SECRET: STRONG_SECRET }).jwtSecret).toBe(STRONG_SECRET);
    });

    it('refuses private webhook targets by default', () => {
      const config = loadAppConfig({ NODE_ENV: 'production', MONGODB_URI: 'mongodb://db/p', JWT_SECRET: STRONG_SECRET });
      expect(config.webhookAllowPrivateUrls).toBe(false);
    });
  });
});
