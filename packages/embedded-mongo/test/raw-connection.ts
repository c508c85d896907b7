/** Test helper: a raw wire-protocol client, to send what a driver never would and read exactly what comes back. */
import { BSON, type Document } from 'mongodb';
import net from 'node:net';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

/** A raw wire-protocol connection, to send what a driver never would. */
export class RawConnection {
  private buffered = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  closed = false;

  private constructor(private readonly socket: net.Socket) {
    socket.on('data', (chunk) => {
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  private changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  send(buf: Buffer) {
    this.socket.write(buf);
  }

  /** Next reply: header fields and its document, or null if the connection closed or nothing came in time. */
  async reply(timeoutMs = 1000): Promise<{ opCode: number; responseTo: number; doc: Document } | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.buffered.length >= 4) {
        const len = this.buffered.readInt32LE(0);
        if (this.buffered.length >= len) {
          const msg = this.buffered.subarray(0, len);
          this.buffered = this.buffered.subarray(len);
          const opCode = msg.readInt32LE(12);
          const docStart = opCode === OP_REPLY ? 36 : 21;
          return { opCode, responseTo: msg.readInt32LE(8), doc: BSON.deserialize(msg.subarray(docStart)) };
        }
      }
      if (this.closed || Date.now() >= deadline) return null;
      await this.changed(deadline - Date.now());
    }
  }

  async waitClosed(timeoutMs = 1000): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline) await this.changed(deadline - Date.now());
    return this.closed;
  }

  destroy() {
    this.socket.destroy();
  }

  /** Stops reading from the socket, as a client that never reads its replies. */
  pauseReading() {
    this.socket.pause();
  }

  resumeReading() {
    this.socket.resume();
  }
}

export function frame(opCode: number, requestId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + body.length, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(0, 8);
  header.writeInt32LE(opCode, 12);
  return Buffer.concat([header, body]);
}

export function opMsg(requestId: number, doc: Document, opts: { flags?: number; checksum?: boolean; sequence?: [string, Document[]] } = {}): Buffer {
  const flags = Buffer.alloc(4);
  flags.writeUInt32LE((opts.flags ?? 0) | (opts.checksum ? 1 : 0));
  const parts = [flags, Buffer.from([0]), Buffer.from(BSON.serialize(doc))];
  if (opts.sequence) {
    const [id, docs] = opts.sequence;
    const payload = Buffer.concat([Buffer.from(`${id}\0`), ...docs.map((d) => Buffer.from(BSON.serialize(d)))]);
    const size = Buffer.alloc(4);
    size.writeInt32LE(4 + payload.length);
    parts.push(Buffer.from([1]), size, payload);
  }
  if (opts.checksum) parts.push(Buffer.alloc(4, 0xab));
  return frame(OP_MSG, requestId, Buffer.concat(parts));
}
