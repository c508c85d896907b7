import { parse, populate } from 'dotenv';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigurationError } from './configuration-error.js';

type Env = Record<string, string | undefined>;

/**
 * Adds the variables of an env file to `env`, never replacing one already set (the shell and the orchestrator win).
 * `ENV_FILE` names the file, which must then exist; otherwise `.env` in the working directory is read when present,
 * except under NODE_ENV=production, where a stray file must not configure the service unasked.
 * Answers the file read, if any.
 */
export function loadEnvFile(env: Env, cwd = process.cwd()): string | undefined {
  const named = env.ENV_FILE?.trim();
  const path = named ? resolve(cwd, named) : resolve(cwd, '.env');
  if (!named && (env.NODE_ENV?.trim().toLowerCase() === 'production' || !existsSync(path))) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigurationError('ENV_FILE', `names a file that cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`, named);
  }
  populate(env as Record<string, string>, parse(text));
  return path;
}
