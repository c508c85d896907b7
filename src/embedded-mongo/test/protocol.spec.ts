import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BSON, MongoClient, type Document } from 'mongodb';
import net from 'node:net';
import { startEmbeddedMongo, type EmbeddedMongo } from '../index.js';

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_COMPRESSED = 2012;
const OP_MSG = 2013;

/** A raw wire-protocol connection, to send what a driver never would. */
class RawConnection {
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
}

function frame(opCode: number, requestId: number, body: Buffer): Buffer {
  const header = Buffer.alloc(16);
  header.writeInt32LE(16 + body.length, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(0, 8);
  header.writeInt32LE(opCode, 12);
  return Buffer.concat([header, body]);
}

function opMsg(requestId: number, doc: Document, opts: { flags?: number; checksum?: boolean; sequence?: [string, Document[]] } = {}): Buffer {
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

describe('embedded engine: wire protocol robustness', () => {
  let engine: EmbeddedMongo;
  let client: MongoClient;

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    client = await new MongoClient(engine.uri).connect();
  });

  afterAll(async () => {
    await client.close();
    await engine.stop();
  });

  const stillServing = async () => expect(await client.db('proto').command({ ping: 1 })).toEqual({ ok: 1 });

  it('answers an unsupported command with CommandNotFound naming it', async () => {
    await expect(client.db('proto').command({ replSetGetStatus: 1 })).rejects.toMatchObject({
      code: 59,
      codeName: 'CommandNotFound',
      message: "no such command: 'replSetGetStatus'",
    });
  });

  it('answers the legacy OP_QUERY handshake with OP_REPLY', async () => {
    const raw = await RawConnection.open(engine.port);
    const flags = Buffer.alloc(4);
    const skipReturn = Buffer.alloc(8);
    skipReturn.writeInt32LE(-1, 4);
    raw.send(frame(OP_QUERY, 7, Buffer.concat([flags, Buffer.from('admin.$cmd\0'), skipReturn, Buffer.from(BSON.serialize({ isMaster: 1 }))])));
    const reply = await raw.reply();
    expect(reply).toMatchObject({ opCode: OP_REPLY, responseTo: 7, doc: { ismaster: true, maxWireVersion: 21, ok: 1 } });
    raw.destroy();
  });

  it('parses document sequences, tolerates the checksum flag and honors moreToCome', async () => {
    const raw = await RawConnection.open(engine.port);
    raw.send(opMsg(1, { insert: 'seq', $db: 'proto' }, { sequence: ['documents', [{ _id: 1 }, { _id: 2 }]], checksum: true }));
    expect((await raw.reply())?.doc).toMatchObject({ n: 2, ok: 1 });
    raw.send(opMsg(2, { insert: 'seq', documents: [{ _id: 3 }], writeConcern: { w: 0 }, $db: 'proto' }, { flags: 2 }));
    raw.send(opMsg(3, { count: 'seq', $db: 'proto' }));
    const next = await raw.reply();
    expect(next).toMatchObject({ opCode: OP_MSG, responseTo: 3, doc: { n: 3, ok: 1 } });
    raw.destroy();
  });

  it('refuses OP_COMPRESSED with an error reply', async () => {
    const raw = await RawConnection.open(engine.port);
    const body = Buffer.alloc(9);
    body.writeInt32LE(OP_MSG, 0);
    raw.send(frame(OP_COMPRESSED, 11, body));
    const reply = await raw.reply();
    expect(reply).toMatchObject({ opCode: OP_MSG, responseTo: 11, doc: { ok: 0, errmsg: expect.stringContaining('OP_COMPRESSED') } });
    raw.destroy();
  });

  it.each([
    ['a length below the header size', () => Buffer.from([8, 0, 0, 0, 1, 2, 3, 4])],
    [
      'a length above the maximum message size',
      () => {
        const header = frame(OP_MSG, 1, Buffer.alloc(4));
        header.writeInt32LE(48_000_001, 0);
        return header;
      },
    ],
    ['an unknown opcode', () => frame(2002, 1, Buffer.alloc(20))],
    ['BSON that does not parse', () => frame(OP_MSG, 1, Buffer.concat([Buffer.alloc(4), Buffer.from([0]), Buffer.from([40, 0, 0, 0, 2, 120, 0])]))],
    ['an unknown section kind', () => frame(OP_MSG, 1, Buffer.concat([Buffer.alloc(4), Buffer.from([9, 0, 0, 0, 0])]))],
  ])('closes only the connection that sent %s', async (_what, message) => {
    const raw = await RawConnection.open(engine.port);
    const bystander = await RawConnection.open(engine.port);
    raw.send(message());
    expect(await raw.waitClosed()).toBe(true);
    bystander.send(opMsg(5, { ping: 1, $db: 'admin' }));
    expect((await bystander.reply())?.doc).toEqual({ ok: 1 });
    bystander.destroy();
    await stillServing();
  });

  it('stop() closes every connection', async () => {
    const other = await startEmbeddedMongo();
    const raw = await RawConnection.open(other.port);
    raw.send(opMsg(1, { ping: 1, $db: 'admin' }));
    expect((await raw.reply())?.doc.ok).toBe(1);
    await other.stop();
    expect(await raw.waitClosed()).toBe(true);
    await expect(RawConnection.open(other.port)).rejects.toThrow();
  });
});
