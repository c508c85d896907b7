import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BSON, MongoClient } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../src/index.js';
import { frame, OP_COMPRESSED, OP_MSG, OP_QUERY, OP_REPLY, opMsg, RawConnection } from './raw-connection.js';

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
