import { afterEach, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo, type ServerLimits } from '../src/index.js';
import { opMsg, RawConnection } from './raw-connection.js';

const started: EmbeddedMongo[] = [];
const raws: RawConnection[] = [];

async function engineWith(limits: Partial<ServerLimits>): Promise<EmbeddedMongo> {
  const engine = await startEmbeddedMongo({ limits });
  started.push(engine);
  return engine;
}

async function raw(engine: EmbeddedMongo): Promise<RawConnection> {
  const connection = await RawConnection.open(engine.port);
  raws.push(connection);
  return connection;
}

const ping = (requestId: number) => opMsg(requestId, { ping: 1, $db: 'admin' });
/** An insert whose message is about `bytes` long. */
const bigInsert = (requestId: number, bytes: number) => opMsg(requestId, { insert: 'c', documents: [{ pad: 'x'.repeat(bytes - 80) }], $db: 'limits' });

afterEach(async () => {
  for (const connection of raws.splice(0)) connection.destroy();
  for (const engine of started.splice(0)) await engine.stop();
});

describe('embedded engine: connection and buffer limits', () => {
  it('answers a connection over the limit with an error and closes it, and keeps serving the others', async () => {
    const engine = await engineWith({ maxConnections: 2 });
    const [a, b] = [await raw(engine), await raw(engine)];
    const extra = await raw(engine);
    // Answered at once, before it sends anything: the engine holds no socket beyond the limit waiting for one.
    expect(await extra.reply()).toMatchObject({ responseTo: 0, doc: { ok: 0, code: 365, codeName: 'TemporarilyUnavailable', errmsg: expect.stringContaining('too many open connections') } });
    expect(await extra.waitClosed()).toBe(true);
    for (const [i, connection] of [a, b].entries()) {
      connection.send(ping(i + 1));
      expect((await connection.reply())?.doc).toEqual({ ok: 1 });
    }
    a.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await raw(engine);
    next.send(ping(9));
    expect((await next.reply())?.doc).toEqual({ ok: 1 });
  });

  it('holds no silent socket beyond the limit during a burst: each is refused and closed at once', async () => {
    const engine = await engineWith({ maxConnections: 3 });
    const admitted = await Promise.all([raw(engine), raw(engine), raw(engine)]);
    const burst = await Promise.all(Array.from({ length: 40 }, () => raw(engine)));
    const replies = await Promise.all(burst.map((s) => s.reply()));
    expect(replies.every((r) => r?.doc.code === 365)).toBe(true);
    expect((await Promise.all(burst.map((s) => s.waitClosed()))).every(Boolean)).toBe(true);
    const client = await new MongoClient(engine.uri, { maxPoolSize: 1, serverSelectionTimeoutMS: 2000 }).connect().catch((err: Error) => err);
    expect(String(client)).toContain('too many open connections');
    for (const [i, connection] of admitted.entries()) {
      connection.send(ping(i + 1));
      expect((await connection.reply())?.doc).toEqual({ ok: 1 });
    }
  });

  it('skips a message longer than the per-connection limit, answers BSONObjectTooLarge, and the connection stays usable', async () => {
    const engine = await engineWith({ maxConnectionBufferBytes: 64 * 1024 });
    const client = await new MongoClient(engine.uri).connect();
    try {
      expect(await client.db('admin').command({ hello: 1 })).toMatchObject({ maxMessageSizeBytes: 64 * 1024, maxBsonObjectSize: 48 * 1024 });
      const { connections } = await client.db('admin').command({ serverStatus: 1 });
      expect(connections.current + connections.available).toBe(1000);
      // The driver sizes its batches by that, so bulk writes still fit.
      await client.db('limits').collection('bulk').insertMany(Array.from({ length: 20 }, (_, i) => ({ i, pad: 'z'.repeat(10_000) })));
      expect(await client.db('limits').collection('bulk').countDocuments()).toBe(20);
    } finally {
      await client.close();
    }
    const connection = await raw(engine);
    connection.send(bigInsert(3, 200 * 1024));
    connection.send(ping(4));
    expect(await connection.reply()).toMatchObject({ responseTo: 3, doc: { ok: 0, code: 10334, codeName: 'BSONObjectTooLarge' } });
    expect(await connection.reply()).toMatchObject({ responseTo: 4, doc: { ok: 1 } });
    expect(engine.bufferedBytes).toBe(0);
  });

  it('refuses a message the total buffer cannot hold with ExceededMemoryLimit, to that client only', async () => {
    const engine = await engineWith({ maxConnectionBufferBytes: 80 * 1024, maxTotalBufferBytes: 100 * 1024 });
    const slow = await raw(engine);
    const other = await raw(engine);
    const held = bigInsert(1, 70 * 1024);
    slow.send(held.subarray(0, 1000)); // its header announces 70 KiB, which stay reserved while the rest is awaited
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.send(bigInsert(2, 60 * 1024));
    expect(await other.reply()).toMatchObject({ responseTo: 2, doc: { ok: 0, code: 146, codeName: 'ExceededMemoryLimit' } });
    other.send(ping(3));
    expect((await other.reply())?.doc).toEqual({ ok: 1 });
    slow.send(held.subarray(1000));
    expect(await slow.reply()).toMatchObject({ responseTo: 1, doc: { ok: 1, n: 1 } });
    other.send(bigInsert(4, 60 * 1024));
    expect(await other.reply()).toMatchObject({ responseTo: 4, doc: { ok: 1, n: 1 } });
  });

  it('holds back a client that sends faster than it reads, without buffering its requests', async () => {
    const engine = await engineWith({ maxConnectionBufferBytes: 256 * 1024 });
    const client = await new MongoClient(engine.uri).connect();
    try {
      await client.db('limits').collection('wide').insertMany(Array.from({ length: 200 }, (_, i) => ({ i, pad: 'y'.repeat(10_000) })));
      const reader = await raw(engine);
      const find = opMsg(1, { find: 'wide', filter: {}, batchSize: 1000, $db: 'limits' });
      // About 2 MB of replies per request: the server stops reading this socket while they wait to be read.
      reader.pauseReading();
      for (let i = 0; i < 10; i++) reader.send(find);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(engine.bufferedBytes).toBeLessThan(2 * 2_100_000 + 256 * 1024);
      expect(await client.db('admin').command({ ping: 1 })).toEqual({ ok: 1 });
      reader.resumeReading();
      for (let i = 0; i < 10; i++) expect((await reader.reply(5000))?.doc.cursor.firstBatch).toHaveLength(200);
    } finally {
      await client.close();
    }
  });

  it('closes a connection idle for longer than the idle timeout; the driver reconnects by itself', async () => {
    const engine = await engineWith({ idleTimeoutMs: 150 });
    const idle = await raw(engine);
    idle.send(ping(1));
    expect((await idle.reply())?.doc).toEqual({ ok: 1 });
    expect(await idle.waitClosed(1000)).toBe(true);

    const client = await new MongoClient(engine.uri, { heartbeatFrequencyMS: 60_000 }).connect();
    try {
      await client.db('limits').collection('c').insertOne({ before: true });
      await new Promise((resolve) => setTimeout(resolve, 400));
      await client.db('limits').collection('c').insertOne({ after: true });
      expect(await client.db('limits').collection('c').countDocuments()).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('counts no bytes once every connection is gone', async () => {
    const engine = await engineWith({});
    const connection = await raw(engine);
    connection.send(bigInsert(1, 100 * 1024).subarray(0, 5000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(engine.bufferedBytes).toBeGreaterThanOrEqual(100 * 1024);
    connection.destroy();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(engine.bufferedBytes).toBe(0);
  });
});
