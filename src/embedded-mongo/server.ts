/**
 * The TCP side: accepts connections, frames messages, answers each request in order. A malformed message (bad
 * length, unknown opcode, unparsable BSON) closes that connection only; every other connection keeps being served.
 * OP_COMPRESSED is answered with an error (as an OP_MSG) and the connection stays open: the server advertises no
 * compressors, so a conforming driver never sends one.
 */
import net from 'node:net';
import type { Document } from 'bson';
import { runCommand } from './commands/index.js';
import { connectionClosed, connectionOpened } from './commands/server-status.js';
import { MongoCommandError } from './errors.js';
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
} from './wire-protocol.js';

export class WireServer {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private nextConnectionId = 1;
  private nextRequestId = 1;

  constructor(
    private readonly engine: Engine,
    private readonly log: (line: string) => void,
  ) {
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

  /** Stops listening and destroys every open connection. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      for (const socket of this.sockets) socket.destroy();
      this.sockets.clear();
      if (!this.server.listening) return resolve();
      this.server.close(() => resolve());
    });
  }

  private accept(socket: net.Socket): void {
    const connectionId = this.nextConnectionId++;
    this.sockets.add(socket);
    connectionOpened(this.engine);
    socket.setNoDelay(true);
    // Chunks are only joined once a whole message has arrived, so large messages are not copied repeatedly.
    let chunks: Buffer[] = [];
    let buffered = 0;
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      buffered += chunk.length;
      while (buffered >= 4 && !socket.destroyed) {
        if (chunks[0].length < 4) chunks = [Buffer.concat(chunks, buffered)];
        const length = chunks[0].readInt32LE(0);
        if (length < HEADER_SIZE || length > MAX_MESSAGE_SIZE) {
          this.drop(socket, connectionId, `invalid message length ${length}`);
          return;
        }
        if (buffered < length) return;
        const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
        const rest = all.subarray(length);
        chunks = rest.length ? [rest] : [];
        buffered = rest.length;
        try {
          this.handle(socket, all.subarray(0, length), connectionId);
        } catch (err) {
          this.drop(socket, connectionId, (err as Error).message);
          return;
        }
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      this.sockets.delete(socket);
      connectionClosed(this.engine);
    });
  }

  private drop(socket: net.Socket, connectionId: number, reason: string): void {
    this.log(`embedded-mongo: closing connection ${connectionId}: ${reason}`);
    socket.destroy();
  }

  private handle(socket: net.Socket, msg: Buffer, connectionId: number): void {
    const header = readHeader(msg);
    if (header.opCode === OP_COMPRESSED) {
      const error = new MongoCommandError(2, 'OP_COMPRESSED is not supported: this server advertises no compressors');
      this.send(socket, buildOpMsg(error.toReply(), this.nextRequestId++, header.requestId));
      return;
    }
    let command;
    if (header.opCode === OP_MSG) command = parseOpMsg(header, msg);
    else if (header.opCode === OP_QUERY) command = parseOpQuery(header, msg);
    else throw new ProtocolError(`unsupported opcode ${header.opCode}`);
    const reply: Document = runCommand(this.engine, command.db, command.body, connectionId, this.log);
    if (command.noReply) return;
    const build = command.legacy ? buildOpReply : buildOpMsg;
    let out: Buffer;
    try {
      out = build(reply, this.nextRequestId++, header.requestId);
    } catch (err) {
      const error = new MongoCommandError(10334, `reply could not be encoded: ${(err as Error).message}`);
      out = build(error.toReply(), this.nextRequestId++, header.requestId);
    }
    this.send(socket, out);
  }

  private send(socket: net.Socket, data: Buffer): void {
    if (!socket.destroyed) socket.write(data);
  }
}
