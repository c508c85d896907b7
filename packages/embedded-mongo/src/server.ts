/**
 * The TCP side: accepts connections up to the connection limit and hands each to a `Connection` (framing, limits,
 * replies). A connection over the limit is answered with an error at once and closed; the others keep being served.
 */
import net from 'node:net';
import type { UserStore } from './auth/users.js';
import { connectionClosed, connectionOpened } from './commands/server-status.js';
import { Connection } from './connection.js';
import { MongoCommandError } from './errors.js';
import { BufferBudget, type ServerLimits } from './limits.js';
import type { Engine } from './storage/engine.js';
import { buildOpMsg } from './wire-protocol.js';

/** How long a refused connection may take to close its side once it has its error. */
const REFUSAL_WAIT_MS = 2000;
/** Refused connections closing at once; more are closed straight away, without the error. */
const MAX_REFUSALS = 64;

export interface WireServerOptions {
  limits: ServerLimits;
  /** Users for access control, or null for none. */
  users: UserStore | null;
  log: (line: string) => void;
}

export class WireServer {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly refusing = new Set<net.Socket>();
  private nextConnectionId = 1;
  private nextRequestId = 1;
  private readonly budget: BufferBudget;

  constructor(
    private readonly engine: Engine,
    private readonly options: WireServerOptions,
  ) {
    this.budget = new BufferBudget(options.limits.maxTotalBufferBytes);
    this.server = net.createServer((socket) => this.accept(socket));
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Bytes buffered across connections right now (what `maxTotalBufferBytes` limits). */
  get bufferedBytes(): number {
    return this.budget.used;
  }

  /** Stops listening and destroys every open connection. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      for (const socket of [...this.sockets, ...this.refusing]) socket.destroy();
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
  }

  private accept(socket: net.Socket): void {
    if (this.sockets.size >= this.options.limits.maxConnections) {
      this.refuse(socket);
      return;
    }
    this.sockets.add(socket);
    connectionOpened(this.engine, this.options.limits.maxConnections);
    socket.once('close', () => {
      this.sockets.delete(socket);
      connectionClosed(this.engine);
    });
    new Connection(socket, this.nextConnectionId++, {
      engine: this.engine,
      limits: this.options.limits,
      budget: this.budget,
      users: this.options.users,
      log: this.options.log,
      nextRequestId: () => this.nextRequestId++,
    });
  }

  /**
   * Answers a connection over the limit at once with an error (`responseTo` 0: drivers read the first reply as the
   * answer to their handshake) and closes it. Waiting for its first message, to answer that one, held up to 64
   * silent sockets for 2 s each beyond the limit, and a burst of them kept that many held: the limit counted only
   * the admitted connections.
   */
  private refuse(socket: net.Socket): void {
    const { limits, log } = this.options;
    log(`embedded-mongo: refusing a connection from ${socket.remoteAddress}: ${this.sockets.size} connections open (limit ${limits.maxConnections})`);
    if (this.refusing.size >= MAX_REFUSALS) {
      socket.destroy();
      return;
    }
    this.refusing.add(socket);
    socket.once('close', () => this.refusing.delete(socket));
    socket.on('error', () => socket.destroy());
    socket.setTimeout(REFUSAL_WAIT_MS, () => socket.destroy());
    socket.resume(); // what it sends is read and dropped until the close
    const error = new MongoCommandError(365, `connection refused because too many open connections: ${this.sockets.size} (limit ${limits.maxConnections})`);
    socket.end(buildOpMsg(error.toReply(), this.nextRequestId++, 0));
  }
}
