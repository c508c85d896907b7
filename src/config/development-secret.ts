import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppConfig } from './app-config.js';

/** The development JWT secret's file, in the data directory. */
export const DEVELOPMENT_SECRET_FILE = 'jwt-secret';

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException).code === code;
}

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8').trim() || undefined;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return undefined;
    throw error;
  }
}

/**
 * Outside production, without JWT_SECRET, the secret is made once and kept in the data directory (readable by its
 * owner only): tokens, sealed webhook secrets, signed links and kept answers all derive from it, so a secret per
 * process would make every webhook undeliverable after a restart on the same data. In memory (no data directory)
 * the data ends with the process, and so does its random secret.
 */
export function keepDevelopmentSecret(config: AppConfig): AppConfig {
  if (!config.jwtSecretGenerated || config.embeddedDataDir === undefined) return config;
  const file = join(config.embeddedDataDir, DEVELOPMENT_SECRET_FILE);
  let secret = read(file);
  if (secret === undefined) {
    mkdirSync(config.embeddedDataDir, { recursive: true, mode: 0o700 });
    try {
      // `wx`: of two processes starting on one directory, the second keeps the first one's secret.
      writeFileSync(file, `${config.jwtSecret}\n`, { flag: 'wx', mode: 0o600 });
      secret = config.jwtSecret;
    } catch (error) {
      if (!isCode(error, 'EEXIST')) throw error;
      secret = read(file) ?? randomBytes(32).toString('base64url');
    }
  }
  return new AppConfig({ ...config, jwtSecret: secret, jwtSecretFile: file });
}
