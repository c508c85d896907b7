/**
 * One client connection: frames its messages, runs them one at a time in order, answers each once its writes are
 * durable. While a reply waits (for the journal's fsync, or for the client to read what it was sent) the socket is
 * paused, so a client that sends faster than it is served is held back by TCP instead of filling memory.
 *
 * Limits (see limits.ts): a message longer than the connection's limit, or one the total buffer cannot take, is
 * read and dropped without being kept, then answered with an error: that client only sees the error, the connection
 * stays usable. A malformed message (bad length, unknown opcode, unparsable BSON) closes this connection only.
 */
import type net from 'node:net';
import type { Document } from 'bson';
import { Authentication } from './auth/authentication.js';
import type { UserStore } from './auth/users.js';
import { runCommand } from './commands/index.js';
import type { ConnectionState } from './commands/context.js';
import { MongoCommandError } from './errors.js';
import type { BufferBudget, ServerLimits } from './limits.js';
import type { Engine } from './storage/engine.js';
import {
  buildOpMsg,
  buildOpReply,
  HEADER_SIZE,
  MAX_MESSAGE_SIZE,
  OP_COMPRESSED,
  OP_MSG,
  OP_QUERY,
  parseOpMsg,
  parseOpQuery,
  ProtocolError,
  readHeader,
  type IncomingCommand,
} from './wire-protocol.js';

/** What every connection of a server shares. */
export interface ConnectionServices {
  engine: Engine;
  limits: ServerLimits;
  budget: BufferBudget;
  users: UserStore | null;
  log: (line: string) => void;
  nextRequestId: () => number;
}

/** Replies not yet taken by the client beyond which the next request waits for it to read them. */
const OUTGOING_BACKLOG = 1024 * 1024;
/** A remainder shorter than this is copied out of the message it arrived with, which can then be freed. */
const COPY_REMAINDER_BELOW = 64 * 1024;

/** The error reply to the message whose header is `head`, in the reply format its opcode expects. */
export function errorReplyTo(head: Buffer, error: MongoCommandError, requestId: number): Buffer {
  const build = head.readInt32LE(12) === OP_QUERY ? buildOpReply : buildOpMsg;
  return build(error.toReply(), requestId, head.readInt32LE(4));
}

export class Connection {
  readonly state: ConnectionState;
  /** Bytes received and not yet part of an admitted message (at most one header's worth, or what was pipelined). */
  private chunks: Buffer[] = [];
  /** Bytes in `chunks`. */
  private held = 0;
  /** The admitted message being received, allocated at its full length when its header came in. */
  private message: Buffer | null = null;
  private filled = 0;
  /** Input bytes this connection counts against the total buffer: held + the admitted message's length. */
  private charged = 0;
  /** Bytes of a refused message still to be read and dropped, then `refusal` is sent. */
  private skipping = 0;
  private refusal: Buffer | null = null;
  private busy = false;
  private closed = false;

  constructor(
    private readonly socket: net.Socket,
    id: number,
    private readonly services: ConnectionServices,
  ) {
    const { limits, users } = services;
    this.state = {
      id,
      maxMessageBytes: Math.min(MAX_MESSAGE_SIZE, limits.maxConnectionBufferBytes),
      auth: users ? new Authentication(users) : null,
      isClosed: () => this.closed || socket.destroyed,
    };
    socket.setNoDelay(true);
    if (limits.idleTimeoutMs > 0) {
      socket.setTimeout(limits.idleTimeoutMs);
      socket.on('timeout', () => this.close(`idle for ${limits.idleTimeoutMs} ms`));
    }
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.closed = true;
      services.budget.charge(-this.charged);
      this.charged = 0;
      this.chunks = [];
      this.message = null;
    });
  }

  close(reason: string): void {
    if (this.socket.destroyed) return;
    this.services.log(`embedded-mongo: closing connection ${this.state.id}: ${reason}`);
    this.socket.destroy();
  }

  private receive(chunk: Buffer): void {
    if (this.skipping > 0) {
      const skipped = Math.min(this.skipping, chunk.length);
      this.skipping -= skipped;
      chunk = chunk.subarray(skipped);
      if (this.skipping === 0) {
        this.send(this.refusal!);
        this.refusal = null;
      }
      if (chunk.length === 0) return;
    }
    if (this.message && this.filled < this.message.length) {
      const copied = chunk.copy(this.message, this.filled);
      this.filled += copied;
      chunk = chunk.subarray(copied);
    }
    if (chunk.length) {
      this.chunks.push(chunk);
      this.held += chunk.length;
      this.recharge();
    }
    this.pump();
  }

  /** Runs every complete message in order, until one has to wait. */
  private pump(): void {
    while (!this.busy && !this.closed && this.skipping === 0) {
      if (!this.message && !this.readHeader()) return;
      if (this.filled < this.message!.length) return;
      const message = this.message!;
      this.message = null;
      this.recharge();
      let pending: Promise<void> | null;
      try {
        pending = this.handle(message);
      } catch (error) {
        this.close((error as Error).message);
        return;
      }
      if (pending || this.socket.writableLength > OUTGOING_BACKLOG) {
        this.wait(pending);
        return;
      }
    }
  }

  /** Reads the next message's header and admits or refuses the message; false when more bytes are needed. */
  private readHeader(): boolean {
    if (this.held < 4) return false;
    if (this.chunks[0].length < Math.min(this.held, HEADER_SIZE)) this.chunks = [Buffer.concat(this.chunks, this.held)];
    const length = this.chunks[0].readInt32LE(0);
    if (length < HEADER_SIZE || length > MAX_MESSAGE_SIZE) {
      this.close(`invalid message length ${length}`);
      return false;
    }
    if (this.held < HEADER_SIZE) return false;
    const head = this.chunks[0].subarray(0, HEADER_SIZE);
    const { budget, limits } = this.services;
    if (length > this.state.maxMessageBytes) {
      return this.refuse(head, length, new MongoCommandError(10334, `message of ${length} bytes is longer than the ${this.state.maxMessageBytes} bytes this server accepts on a connection`));
    }
    const charge = Math.max(this.held, length);
    if (!budget.tryCharge(this.charged, charge)) {
      return this.refuse(head, length, new MongoCommandError(146, `message of ${length} bytes refused: the server is holding ${budget.used} of its ${limits.maxTotalBufferBytes} bytes of buffers for all connections; retry later`));
    }
    this.charged = charge;
    // Received in one piece when it is all here already; else into a buffer of its length, so a large message is
    // never held twice (chunks, then their concatenation).
    if (this.held >= length) {
      this.message = this.take(length);
      this.filled = length;
    } else {
      this.message = Buffer.allocUnsafe(length);
      this.filled = this.take(this.held).copy(this.message);
    }
    return true;
  }

  /** Drops the message (what arrived of it, and the rest as it arrives), then answers `error`. */
  private refuse(head: Buffer, length: number, error: MongoCommandError): boolean {
    this.services.log(`embedded-mongo: connection ${this.state.id}: ${error.message}`);
    const reply = errorReplyTo(head, error, this.services.nextRequestId());
    const here = Math.min(this.held, length);
    this.take(here);
    this.recharge();
    this.skipping = length - here;
    if (this.skipping === 0) this.send(reply);
    else this.refusal = reply;
    return this.skipping === 0 && this.readHeader();
  }

  private take(n: number): Buffer {
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.held);
    const rest = all.subarray(n);
    this.chunks = rest.length === 0 ? [] : [rest.length < COPY_REMAINDER_BELOW ? Buffer.from(rest) : rest];
    this.held = rest.length;
    return all.subarray(0, n);
  }

  private recharge(): void {
    const charge = this.held + (this.message?.length ?? 0);
    this.services.budget.charge(charge - this.charged);
    this.charged = charge;
  }

  /** Pauses reading until `pending` is settled and the client has read what it was sent. */
  private wait(pending: Promise<void> | null): void {
    this.busy = true;
    this.socket.pause();
    const drained = () =>
      this.socket.writableLength <= OUTGOING_BACKLOG || this.closed
        ? undefined
        : new Promise<void>((resolve) => {
            const done = () => {
              this.socket.off('drain', done).off('close', done);
              resolve();
            };
            this.socket.on('drain', done).on('close', done);
          });
    void (async () => {
      await pending;
      await drained();
    })().then(() => {
      this.busy = false;
      if (this.closed) return;
      this.socket.resume();
      this.pump();
    });
  }

  /**
   * Runs one message; answers a promise when the reply has to wait (for a command that gave up the thread on the way,
   * or for the journal), else null (reply sent).
   */
  private handle(message: Buffer): Promise<void> | null {
    const header = readHeader(message);
    const { engine, log, nextRequestId } = this.services;
    if (header.opCode === OP_COMPRESSED) {
      const error = new MongoCommandError(2, 'OP_COMPRESSED is not supported: this server advertises no compressors');
      this.send(buildOpMsg(error.toReply(), nextRequestId(), header.requestId));
      return null;
    }
    let command;
    if (header.opCode === OP_MSG) command = parseOpMsg(header, message);
    else if (header.opCode === OP_QUERY) command = parseOpQuery(header, message);
    else throw new ProtocolError(`unsupported opcode ${header.opCode}`);
    const lsnBefore = engine.changeLog?.lsn;
    const reply = runCommand(engine, command.db, command.body, this.state, log);
    if (reply instanceof Promise) return reply.then((answer) => this.answer(answer, command, header.requestId, lsnBefore) ?? undefined);
    return this.answer(reply, command, header.requestId, lsnBefore);
  }

  /** Sends a command's reply, once the changes it made (if any) are durable; a promise while it waits for them. */
  private answer(reply: Document, command: IncomingCommand, requestId: number, lsnBefore: number | undefined): Promise<void> | null {
    const { engine, nextRequestId } = this.services;
    const changeLog = engine.changeLog;
    if (command.noReply) return null;
    const build = command.legacy ? buildOpReply : buildOpMsg;
    const encode = (doc: Document) => {
      try {
        return build(doc, nextRequestId(), requestId);
      } catch (err) {
        const error = new MongoCommandError(10334, `reply could not be encoded: ${(err as Error).message}`);
        return build(error.toReply(), nextRequestId(), requestId);
      }
    };
    // A command that changed data is acknowledged only once its changes are durable.
    const durable = changeLog && changeLog.lsn !== lsnBefore ? changeLog.whenDurable(changeLog.lsn) : null;
    if (!durable) {
      this.send(encode(reply));
      return null;
    }
    return durable.then(
      () => this.send(encode(reply)),
      (error: unknown) => this.send(encode((error instanceof MongoCommandError ? error : new MongoCommandError(1, String(error))).toReply())),
    );
  }

  private send(data: Buffer): void {
    if (this.socket.destroyed) return;
    const { budget } = this.services;
    budget.charge(data.length);
    this.socket.write(data, () => budget.charge(-data.length));
  }
}
