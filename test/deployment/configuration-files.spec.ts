import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { loadAppConfig } from '../../src/config/environment.js';

/** What production requires, as docker-compose.yml asks for it (`${VAR:?...}`). */
const REQUIRED = {
  JWT_SECRET: 'a-secret-of-at-least-thirty-two-characters',
  WEBHOOK_SECRET_KEYS: `k1:${Buffer.alloc(32, 1).toString('base64')}`,
};

/** The variables loadAppConfig reads, found by reading them: every name it asks the environment for. */
function variablesRead(): string[] {
  const read = new Set<string>();
  const env = new Proxy<Record<string, string | undefined>>(
    { NODE_ENV: 'production', MONGODB_URI: 'mongodb://mongo:27017/parley', ...REQUIRED },
    {
      get(target, name) {
        if (typeof name === 'string') read.add(name);
        return target[name as string];
      },
    },
  );
  loadAppConfig(env);
  return [...read].sort();
}

/** The names of docs/configuration.md's table: its first column. */
function documentedVariables(): string[] {
  const rows = readFileSync('docs/configuration.md', 'utf8').matchAll(/^\| `([A-Z0-9_]+)` \|/gm);
  return [...rows].map((row) => row[1]).sort();
}

/** The api service's environment in docker-compose.yml: each name with its value as written. */
function composeEnvironment(): Map<string, string> {
  const compose = readFileSync('docker-compose.yml', 'utf8');
  const block = /^ {4}environment:\n((?: {6}.*\n| *#.*\n)+)/m.exec(compose);
  expect(block).not.toBeNull();
  const entries = [...block![1].matchAll(/^ {6}([A-Z0-9_]+): "?([^"\n]*?)"?(?: +#.*)?$/gm)];
  return new Map(entries.map((entry) => [entry[1], entry[2]]));
}

/** What Compose makes of a value when the shell sets nothing: `${X:-default}` is the default, `${X:?...}` required. */
function unsetValue(name: string, written: string): string {
  const interpolated = /^\$\{([A-Z0-9_]+):([-?])(.*)\}$/.exec(written);
  if (!interpolated) return written;
  expect({ name, variable: interpolated[1] }).toEqual({ name, variable: name });
  return interpolated[2] === '?' ? REQUIRED[name as keyof typeof REQUIRED] : interpolated[3];
}

/** Read by the app, but not set by the compose stack, and why. */
const NOT_IN_COMPOSE: Record<string, string> = {
  EMBEDDED_DATA_DIR: 'the embedded engine only; the stack runs MongoDB',
  DEMO_SEED: 'the embedded engine only; the stack runs MongoDB',
};

/**
 * Documented, but the runtime's own (Node.js's NODE_OPTIONS, glibc's allocator settings, which the Docker image sets),
 * or read before the configuration (ENV_FILE, which names its file).
 */
const NODE_VARIABLES = ['ENV_FILE', 'MALLOC_ARENA_MAX', 'MALLOC_MMAP_THRESHOLD_', 'NODE_OPTIONS'];

/** `.env.example`'s variables: each `NAME=value` line, commented out or not, with its value. */
function exampleVariables(): Map<string, string> {
  const lines = readFileSync('.env.example', 'utf8').matchAll(/^(?:# )?([A-Z0-9_]+)=(.*)$/gm);
  return new Map([...lines].map((line) => [line[1], line[2]]));
}

describe('the configuration variables, the docs and docker-compose.yml agree', () => {
  it('docs/configuration.md lists exactly the variables the app reads (and the runtime\'s own)', () => {
    expect(documentedVariables()).toEqual([...variablesRead(), ...NODE_VARIABLES].sort());
  });

  it('.env.example lists every documented variable, and its values as written make a valid configuration', () => {
    const example = exampleVariables();
    expect([...example.keys()].sort()).toEqual(documentedVariables().filter((name) => !NODE_VARIABLES.includes(name)));
    const uncommented = Object.fromEntries([...example].filter(([, value]) => value !== ''));
    expect(() => loadAppConfig(uncommented)).not.toThrow();
  });

  it('docker-compose.yml passes every one of them but the embedded engine\'s', () => {
    const passed = [...composeEnvironment().keys()].sort();
    expect(passed).toEqual(variablesRead().filter((name) => !(name in NOT_IN_COMPOSE)));
  });

  it('with nothing set in the shell, its values are the defaults: the same configuration as leaving them all out', () => {
    const fromCompose = Object.fromEntries([...composeEnvironment()].map(([name, written]) => [name, unsetValue(name, written)]));
    const leftOut = { NODE_ENV: 'production', MONGODB_URI: fromCompose.MONGODB_URI, ...REQUIRED };
    expect(loadAppConfig(fromCompose)).toEqual(loadAppConfig(leftOut));
  });
});
