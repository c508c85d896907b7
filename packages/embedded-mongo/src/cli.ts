/**
 * Standalone server: `node dist/cli.js [options]` (or `npm run db -- [options]` at the repository root); `--help` lists
 * them. Logs the URI to connect to; SIGINT/SIGTERM stop it cleanly (with a data directory: journal flushed, a
 * snapshot written, the lock released).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { parseUser, parseUsersFile, type UserPassword } from './auth/users.js';
import { DEFAULT_JOURNAL_SIZE_LIMIT } from './durability/data-directory.js';
import { startEmbeddedMongo, type EmbeddedMongoOptions } from './index.js';
import { DEFAULT_LIMITS } from './limits.js';

const MiB = 1024 * 1024;

const USAGE = `usage: cli.js [options]
  --port N                  TCP port (default 0: a free port, printed)
  --host ADDRESS            interface to listen on (default 127.0.0.1); a non-loopback address requires --auth
  --data-dir DIR            keep the data in DIR (journal + snapshots); without it, data lives in memory
  --journal-size-limit SIZE snapshot and start a new journal past this size (default ${DEFAULT_JOURNAL_SIZE_LIMIT / MiB}m)
  --auth                    require SCRAM-SHA-256 authentication (users of the admin database)
  --user NAME:PASSWORD      a user (repeatable)
  --users-file FILE         users, one NAME:PASSWORD per line (# comments)
  --max-connections N       open connections (default ${DEFAULT_LIMITS.maxConnections})
  --max-connection-buffer SIZE  bytes buffered per connection, i.e. the largest message (default ${DEFAULT_LIMITS.maxConnectionBufferBytes})
  --max-total-buffer SIZE   bytes buffered across all connections (default ${DEFAULT_LIMITS.maxTotalBufferBytes / MiB}m)
  --idle-timeout SECONDS    close connections idle this long; 0 = never (default ${DEFAULT_LIMITS.idleTimeoutMs / 1000})
SIZE is a number of bytes, or with a k, m or g suffix (binary units).`;

function integer(flag: string, value: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) throw new Error(`--${flag} must be an integer from ${min} to ${max}, got ${value}`);
  return n;
}

function size(flag: string, value: string): number {
  const match = /^(\d+)([kmg]?)$/i.exec(value);
  if (!match || Number(match[1]) === 0) throw new Error(`--${flag} must be a size such as 1048576, 512k, 64m or 1g, got ${value}`);
  return Number(match[1]) * 1024 ** ' kmg'.indexOf(match[2].toLowerCase() || ' ');
}

class UsageError extends Error {}

function parseCli(argv: string[]): EmbeddedMongoOptions & { help: boolean } {
  try {
    return parseFlags(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

function parseFlags(argv: string[]): EmbeddedMongoOptions & { help: boolean } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'journal-size-limit': { type: 'string' },
      auth: { type: 'boolean' },
      user: { type: 'string', multiple: true },
      'users-file': { type: 'string' },
      'max-connections': { type: 'string' },
      'max-connection-buffer': { type: 'string' },
      'max-total-buffer': { type: 'string' },
      'idle-timeout': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  const users: UserPassword[] = [...(values.user ?? []).map(parseUser), ...(values['users-file'] ? parseUsersFile(readFileSync(values['users-file'], 'utf8')) : [])];
  if (values.auth && users.length === 0) throw new Error('--auth needs at least one user: --user NAME:PASSWORD or --users-file FILE');
  if (!values.auth && users.length > 0) throw new Error('users are only used with --auth');
  const limits: EmbeddedMongoOptions['limits'] = {};
  if (values['max-connections'] !== undefined) limits.maxConnections = integer('max-connections', values['max-connections'], 1);
  if (values['max-connection-buffer'] !== undefined) limits.maxConnectionBufferBytes = size('max-connection-buffer', values['max-connection-buffer']);
  if (values['max-total-buffer'] !== undefined) limits.maxTotalBufferBytes = size('max-total-buffer', values['max-total-buffer']);
  if (values['idle-timeout'] !== undefined) limits.idleTimeoutMs = integer('idle-timeout', values['idle-timeout'], 0) * 1000;
  return {
    help: values.help === true,
    port: values.port === undefined ? undefined : integer('port', values.port, 0, 65535),
    host: values.host,
    dataDir: values['data-dir'],
    journalSizeLimit: values['journal-size-limit'] === undefined ? undefined : size('journal-size-limit', values['journal-size-limit']),
    users: values.auth ? users : undefined,
    limits,
  };
}

async function main(): Promise<void> {
  const { help, ...options } = parseCli(process.argv.slice(2));
  if (help) {
    console.log(USAGE);
    return;
  }
  const engine = await startEmbeddedMongo({ ...options, log: (line) => console.error(line) });
  const storage = options.dataDir ? `data in ${options.dataDir}` : 'data in memory';
  const access = options.users ? `, authentication required (users of admin: ${options.users.map((u) => u.user).join(', ')})` : '';
  console.log(`embedded-mongo: MongoDB-compatible server listening (${storage})${access}, connect with ${engine.uri}`);
  const shutdown = (signal: string) => {
    console.log(`embedded-mongo: ${signal} received, stopping`);
    engine.stop().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(`embedded-mongo: stopping failed: ${error.message}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: Error) => {
  console.error(`embedded-mongo: ${err.message}${err instanceof UsageError ? `\n${USAGE}` : ''}`);
  process.exit(1);
});
