/**
 * Public API of the embedded MongoDB-compatible engine: start a server in this process on 127.0.0.1 (ephemeral
 * port by default), connect any MongoDB driver or Mongoose to `uri`, `stop()` when done. Data lives in memory, or
 * with `dataDir` in a data directory that survives the process (journal + snapshots, see durability/).
 */
import { UserStore, type UserPassword } from './auth/users.js';
import { DataDirectory } from './durability/data-directory.js';
import { DEFAULT_LIMITS, type ServerLimits } from './limits.js';
import { Engine } from './storage/engine.js';
import { WireServer } from './server.js';

export { DataDirectoryInUseError } from './durability/lock-file.js';
export type { ServerLimits } from './limits.js';

export interface EmbeddedMongoOptions {
  /** Interface to listen on; default 127.0.0.1. Anything but a loopback address requires `users`. */
  host?: string;
  /** TCP port; default 0 = an ephemeral port chosen by the OS. */
  port?: number;
  /** Data directory (created if missing, one engine at a time); default: none, data lives in memory. */
  dataDir?: string;
  /** Journal bytes after which a snapshot is taken; default 64 MiB. */
  journalSizeLimit?: number;
  /** Access control: the SCRAM-SHA-256 users of the `admin` database; default none (no authentication). */
  users?: UserPassword[];
  /** Connection and buffer limits; each defaults to DEFAULT_LIMITS. */
  limits?: Partial<ServerLimits>;
  /** How often expired TTL documents are deleted; default 60000 (MongoDB's TTL monitor period). */
  ttlMonitorIntervalMs?: number;
  /** Receives diagnostic lines (recovery, snapshots, closed or refused connections, internal errors); default: discarded. */
  log?: (line: string) => void;
}

/** Idle cursors are checked for expiry this often. */
const CURSOR_SWEEP_MS = 60_000;

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || /^::ffff:127\./i.test(host);
}

export class EmbeddedMongo {
  /** `mongodb://<host>:<port>/` */
  readonly uri: string;
  readonly port: number;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: WireServer,
    private readonly engine: Engine,
    private readonly dataDirectory: DataDirectory | null,
    private readonly timers: NodeJS.Timeout[],
    host: string,
    port: number,
  ) {
    this.port = port;
    // A wildcard listen address is reachable locally through the loopback address.
    const reachable = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    this.uri = `mongodb://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}/`;
  }

  /** @internal use `startEmbeddedMongo` */
  static async start(options: EmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
    const host = options.host ?? '127.0.0.1';
    const log = options.log ?? (() => {});
    const users = options.users?.length ? new UserStore(options.users) : null;
    if (!users && !isLoopback(host))
      throw new Error(`listening on ${host} (not a loopback address) requires access control: give users (--auth with --user or --users-file)`);
    const limits = { ...DEFAULT_LIMITS, ...options.limits };
    const engine = new Engine();
    engine.workLimits = { sliceMs: limits.sliceMs, regexMs: limits.regexMs };
    const dataDirectory = options.dataDir ? DataDirectory.open(options.dataDir, engine, { journalSizeLimit: options.journalSizeLimit, log }) : null;
    const server = new WireServer(engine, { limits, users, log });
    let port: number;
    try {
      port = await server.listen(host, options.port ?? 0);
    } catch (error) {
      await dataDirectory?.close();
      throw error;
    }
    const sweep = (what: string, task: () => void) => () => {
      try {
        task();
      } catch (error) {
        log(`embedded-mongo: ${what} failed: ${(error as Error).message}`);
      }
    };
    // The database's own monitors, as mongod runs them (its TTL monitor every 60 s, its idle-cursor sweep): they
    // belong to the engine, which serves any app; the app's background work runs on its event log's lanes instead.
    const timers = [
      setInterval(sweep('TTL deletion', () => engine.expireTtl(Date.now())), options.ttlMonitorIntervalMs ?? 60_000),
      setInterval(sweep('cursor expiry', () => engine.cursors.expireIdle(Date.now())), CURSOR_SWEEP_MS),
    ];
    for (const t of timers) t.unref();
    return new EmbeddedMongo(server, engine, dataDirectory, timers, host, port);
  }

  /** Bytes the server holds in connection buffers right now. */
  get bufferedBytes(): number {
    return this.server.bufferedBytes;
  }

  /**
   * Closes the listener and every connection, clears timers; with a data directory, waits for the journal, writes
   * a snapshot and releases the directory. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const t of this.timers) clearInterval(t);
      this.engine.cursors.clear();
      await this.server.close();
      await this.dataDirectory?.close();
    })();
    return this.stopping;
  }
}

export function startEmbeddedMongo(options?: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  return EmbeddedMongo.start(options);
}
