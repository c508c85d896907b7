/**
 * Public API of the embedded MongoDB-compatible engine: start a server in this process on 127.0.0.1 (ephemeral
 * port by default), connect any MongoDB driver or Mongoose to `uri`, `stop()` when done. Data lives in memory.
 */
import { Engine } from './storage/engine.js';
import { WireServer } from './server.js';

export interface EmbeddedMongoOptions {
  /** Interface to listen on; default 127.0.0.1. */
  host?: string;
  /** TCP port; default 0 = an ephemeral port chosen by the OS. */
  port?: number;
  /** How often expired TTL documents are deleted; default 60000 (MongoDB's TTL monitor period). */
  ttlMonitorIntervalMs?: number;
  /** Receives diagnostic lines (closed malformed connections, internal errors); default: discarded. */
  log?: (line: string) => void;
}

/** Idle cursors are checked for expiry this often. */
const CURSOR_SWEEP_MS = 60_000;

export class EmbeddedMongo {
  /** `mongodb://<host>:<port>/` */
  readonly uri: string;
  readonly port: number;
  private stopping: Promise<void> | undefined;

  private constructor(
    private readonly server: WireServer,
    private readonly engine: Engine,
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
    const engine = new Engine();
    const server = new WireServer(engine, log);
    const port = await server.listen(host, options.port ?? 0);
    const timers = [
      setInterval(() => engine.expireTtl(Date.now()), options.ttlMonitorIntervalMs ?? 60_000),
      setInterval(() => engine.cursors.expireIdle(Date.now()), CURSOR_SWEEP_MS),
    ];
    for (const t of timers) t.unref();
    return new EmbeddedMongo(server, engine, timers, host, port);
  }

  /** Closes the listener and every connection, clears timers. Safe to call more than once. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      for (const t of this.timers) clearInterval(t);
      this.engine.cursors.clear();
      await this.server.close();
    })();
    return this.stopping;
  }
}

export function startEmbeddedMongo(options?: EmbeddedMongoOptions): Promise<EmbeddedMongo> {
  return EmbeddedMongo.start(options);
}
