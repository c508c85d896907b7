import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigurationError } from './configuration-error.js';
import { loadEnvFile } from './env-file.js';

const dir = mkdtempSync(join(tmpdir(), 'parley-env-'));
writeFileSync(join(dir, '.env'), 'PORT=4000\nLOG_LEVEL=debug\n# a comment\nJWT_SECRET="quoted secret"\n');
writeFileSync(join(dir, 'prod.env'), 'MONGODB_URI=mongodb://db/parley\n');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadEnvFile', () => {
  it('reads .env from the working directory when present, leaving variables already set as they are', () => {
    const env: Record<string, string | undefined> = { LOG_LEVEL: 'warn' };
    expect(loadEnvFile(env, dir)).toBe(join(dir, '.env'));
    expect(env).toEqual({ PORT: '4000', LOG_LEVEL: 'warn', JWT_SECRET: 'quoted secret' });
  });

  it('reads nothing when there is no .env', () => {
    const env: Record<string, string | undefined> = {};
    expect(loadEnvFile(env, tmpdir())).toBeUndefined();
    expect(env).toEqual({});
  });

  it('never reads .env under NODE_ENV=production, unless ENV_FILE names a file', () => {
    const env: Record<string, string | undefined> = { NODE_ENV: 'production' };
    expect(loadEnvFile(env, dir)).toBeUndefined();
    expect(env).toEqual({ NODE_ENV: 'production' });
    const named: Record<string, string | undefined> = { NODE_ENV: 'production', ENV_FILE: 'prod.env' };
    expect(loadEnvFile(named, dir)).toBe(join(dir, 'prod.env'));
    expect(named.MONGODB_URI).toBe('mongodb://db/parley');
    expect(named.PORT).toBeUndefined();
  });

  it('refuses an ENV_FILE that cannot be read, naming it', () => {
    expect(() => loadEnvFile({ ENV_FILE: 'missing.env' }, dir)).toThrow(ConfigurationError);
    expect(() => loadEnvFile({ ENV_FILE: 'missing.env' }, dir)).toThrow('ENV_FILE names a file that cannot be read (ENOENT) (got "missing.env")');
  });
});
