import { afterEach, describe, expect, it } from '@jest/globals';
import { Binary, Decimal128, Double, Long, MongoClient, ObjectId, type Document } from 'mongodb';
import { spawn } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { frame } from '../src/durability/framing.js';
import { startEmbeddedMongo, type EmbeddedMongo, type EmbeddedMongoOptions } from '../src/index.js';

const dirs: string[] = [];
const opened: { engine: EmbeddedMongo; client: MongoClient }[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'parley-engine-'));
  dirs.push(dir);
  return dir;
}

async function open(dataDir: string, options: Omit<EmbeddedMongoOptions, 'dataDir'> = {}) {
  const log: string[] = [];
  const engine = await startEmbeddedMongo({ dataDir, log: (line) => log.push(line), ...options });
  const client = await new MongoClient(engine.uri).connect();
  const handle = { engine, client, db: client.db('durable'), log };
  opened.push(handle);
  return handle;
}

async function close(handle: { engine: EmbeddedMongo; client: MongoClient }): Promise<void> {
  await handle.client.close();
  await handle.engine.stop();
  opened.splice(opened.indexOf(handle), 1);
}

/** The files of a running engine's directory as a kill -9 leaves them: whatever has been written so far. */
function crashImage(dataDir: string): string {
  const copy = tempDir();
  cpSync(dataDir, copy, { recursive: true });
  return copy;
}

const journalFiles = (dir: string) => readdirSync(dir).filter((name) => name.startsWith('journal-')).sort();
const lastJournal = (dir: string) => join(dir, journalFiles(dir).at(-1)!);

afterEach(async () => {
  for (const handle of opened.splice(0)) {
    await handle.client.close();
    await handle.engine.stop();
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('embedded engine: data directory', () => {
  const sample = (i: number): Document => ({
    _id: new ObjectId(),
    n: i,
    email: `user${i}@example.com`,
    big: Long.fromString('9007199254740993'),
    price: Decimal128.fromString('19.99'),
    blob: new Binary(Buffer.from([i, 1, 2]), 4),
    at: new Date(Date.UTC(2024, 0, 1, 0, 0, i)),
    tags: ['a', { deep: [1, null] }],
  });

  it('keeps collections, options, indexes and documents across a stop and a start', async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.db.createCollection('people', { collation: { locale: 'simple' } });
    await first.db.collection('people').createIndex({ email: 1 }, { unique: true });
    await first.db.collection('people').createIndex({ at: 1 }, { expireAfterSeconds: 3600 * 24 * 365 * 100, name: 'ttl' });
    await first.db.collection('people').createIndex({ n: -1 });
    await first.db.collection('people').insertMany([sample(1), sample(2), sample(3), sample(4)]);
    await first.db.collection('people').updateOne({ n: 2 }, { $set: { email: 'two@example.com' }, $inc: { big: Long.fromNumber(1) } });
    await first.db.collection('people').deleteOne({ n: 3 });
    await first.db.collection('people').dropIndex('n_-1');
    await first.db.collection('gone').insertOne({ x: 1 });
    await first.db.collection('gone').drop();
    await first.client.db('other').collection('c').insertOne({ y: 1 });
    await first.client.db('other').dropDatabase();
    const before = {
      docs: await first.db.collection('people').find().toArray(),
      indexes: await first.db.collection('people').listIndexes().toArray(),
      collections: await first.db.listCollections().toArray(),
    };
    await close(first);
    expect(existsSync(join(dir, 'engine.lock'))).toBe(false);

    const second = await open(dir);
    expect((await second.client.db('admin').command({ serverStatus: 1 })).storageEngine).toMatchObject({ persistent: true });
    expect(await second.db.collection('people').find().toArray()).toEqual(before.docs);
    expect(await second.db.collection('people').listIndexes().toArray()).toEqual(before.indexes);
    expect(await second.db.listCollections().toArray()).toEqual(before.collections);
    expect((await second.client.db().admin().listDatabases()).databases.map((d) => d.name)).toEqual(['durable']);
    await expect(second.db.collection('people').insertOne({ email: 'two@example.com' })).rejects.toMatchObject({ code: 11000 });
  });

  it('keeps every kind of collection, its options and indexes, and the exact values, from the journal and from a snapshot', async () => {
    const dir = tempDir();
    const live = await open(dir);
    const db = live.db;
    await db.createCollection('orders', { collation: { locale: 'en', strength: 2 }, validator: { total: { $gte: 0 } } });
    await db.collection('orders').createIndex({ note: 'text' });
    await db.collection('orders').createIndex({ at: 1 }, { expireAfterSeconds: 3600 * 24 * 365 * 100 });
    await db.collection('orders').insertMany([
      { _id: 1, status: 'Paid', total: new Double(10), note: 'blue shirts', at: new Date(Date.UTC(2024, 1, 1)) },
      { _id: 2, status: 'open', total: 2.5, note: 'red shoes', at: new Date(Date.UTC(2024, 1, 2)) },
    ] as Document[]);
    await db.command({ collMod: 'orders', index: { keyPattern: { at: 1 }, expireAfterSeconds: 3600 * 24 * 365 * 99 } });
    await db.command({ collMod: 'orders', validationLevel: 'moderate' });
    // An index made prepareUnique while it holds duplicates: replayed, it must keep them.
    await db.collection('orders').insertOne({ _id: 3, status: 'OPEN', total: 1 } as Document);
    await db.collection('orders').createIndex({ status: 1 });
    await db.command({ collMod: 'orders', index: { name: 'status_1', prepareUnique: true } });
    await db.createCollection('paid', { viewOn: 'orders', pipeline: [{ $match: { status: 'paid' } }] });
    await db.createCollection('log', { capped: true, size: 4096, max: 2 });
    for (let i = 0; i < 4; i++) await db.collection('log').insertOne({ i });
    await db.createCollection('metrics', { timeseries: { timeField: 't', metaField: 'm' } });
    const t = new Date();
    // Two measurements share an _id, as time series documents may.
    await db.collection('metrics').insertMany([{ _id: 7, t, m: 'a', v: 1 }, { _id: 7, t, m: 'b', v: 2 }, { t, m: 'c', v: 3 }] as Document[]);
    await db.collection('metrics').deleteMany({ m: 'b' });
    await db.createCollection('clustered', { clusteredIndex: { key: { _id: 1 }, unique: true, name: 'by id' } });
    await db.collection('clustered').insertOne({ _id: 'k', v: 1 } as Document);
    await db.collection('orders').aggregate([{ $match: { total: { $gt: 5 } } }, { $out: 'big' }]).toArray();
    const state = async (d: typeof db) => {
      const names = (await d.listCollections().toArray()).map((c) => c.name).sort();
      const out: Document = { collections: await d.listCollections().toArray().then((cs) => cs.sort((a, b) => a.name.localeCompare(b.name))) };
      for (const name of names) {
        out[name] = await d.collection(name).find().sort({ _id: 1, m: 1 }).toArray();
        if (name !== 'paid') out[`${name} indexes`] = await d.collection(name).listIndexes().toArray();
      }
      out.search = await d.collection('orders').find({ $text: { $search: 'shirt' } }, { projection: { _id: 1 } }).toArray();
      out.collated = await d.collection('orders').countDocuments({ status: 'paid' });
      // The driver hands doubles back as numbers: their stored type shows through $type.
      out.doubles = await d.collection('orders').countDocuments({ total: { $type: 'double' } });
      return out;
    };
    const before = await state(db);
    expect(before.collated).toBe(1);
    expect(before.doubles).toBe(2);
    expect(before.search).toEqual([{ _id: 1 }]);
    expect(before.log).toHaveLength(2);
    expect(before.metrics.map((m: Document) => m.m)).toEqual(['a', 'c']);

    const recovered = await open(crashImage(dir));
    expect(await state(recovered.db)).toEqual(before);
    await close(recovered);

    await close(live);
    const restarted = await open(dir);
    expect(await state(restarted.db)).toEqual(before);
  });

  it('recovers every acknowledged write from the files as a crash leaves them, from the journal alone', async () => {
    const dir = tempDir();
    const live = await open(dir);
    const people = live.db.collection('people');
    await people.createIndex({ email: 1 }, { unique: true });
    await Promise.all(Array.from({ length: 20 }, (_, lane) => people.insertMany(Array.from({ length: 10 }, (_, i) => sample(lane * 10 + i)))));
    await Promise.all(Array.from({ length: 20 }, (_, lane) => people.updateOne({ n: lane * 10 }, { $set: { touched: lane } })));
    await people.deleteMany({ n: { $gte: 190 } });
    const acknowledged = await people.find().sort({ n: 1 }).toArray();
    const image = crashImage(dir);
    expect(existsSync(join(image, 'snapshot.bin'))).toBe(false);

    const recovered = await open(image);
    expect(await recovered.db.collection('people').find().sort({ n: 1 }).toArray()).toEqual(acknowledged);
    expect(acknowledged).toHaveLength(190);
    expect(recovered.log.some((line) => /recovered .* journal records replayed/.test(line))).toBe(true);
  });

  it('drops a torn last record, keeps everything before it, and goes on writing after it', async () => {
    const dir = tempDir();
    const live = await open(dir);
    await live.db.collection('c').insertMany([{ _id: 1 }, { _id: 2 }] as Document[]);
    const image = crashImage(dir);
    const torn = frame({ lsn: 999, op: 'put', db: 'durable', coll: 'c', doc: { _id: 3 } });
    const sizeBefore = statSync(lastJournal(image)).size;
    appendFileSync(lastJournal(image), torn.subarray(0, torn.length - 3));

    const recovered = await open(image);
    expect(await recovered.db.collection('c').find().toArray()).toEqual([{ _id: 1 }, { _id: 2 }]);
    expect(recovered.log.some((line) => line.includes('an incomplete record') && line.includes(`${torn.length - 3} bytes`))).toBe(true);
    expect(statSync(lastJournal(image)).size).toBe(sizeBefore);
    await recovered.db.collection('c').insertOne({ _id: 4 } as Document);
    const again = crashImage(image);
    const reopened = await open(again);
    expect(await reopened.db.collection('c').find().toArray()).toEqual([{ _id: 1 }, { _id: 2 }, { _id: 4 }]);
  });

  it('drops a last record whose checksum does not match', async () => {
    const dir = tempDir();
    const live = await open(dir);
    await live.db.collection('c').insertOne({ _id: 1, v: 'kept' } as Document);
    await live.db.collection('c').insertOne({ _id: 2, v: 'damaged' } as Document);
    const image = crashImage(dir);
    const path = lastJournal(image);
    const bytes = readFileSync(path);
    bytes[bytes.length - 2] ^= 0xff;
    writeFileSync(path, bytes);

    const recovered = await open(image);
    expect(await recovered.db.collection('c').find().toArray()).toEqual([{ _id: 1, v: 'kept' }]);
    expect(recovered.log.some((line) => line.includes('checksum does not match'))).toBe(true);
  });

  describe('journal files written by hand', () => {
    const records = (from: number, to: number) =>
      Buffer.concat(
        Array.from({ length: to - from + 1 }, (_, i) =>
          from + i === 1 ? frame({ lsn: 1, op: 'createCollection', db: 'd', coll: 'c', options: {} }) : frame({ lsn: from + i, op: 'put', db: 'd', coll: 'c', doc: { _id: from + i } }),
        ),
      );
    const name = (lsn: number) => `journal-${String(lsn).padStart(16, '0')}.bin`;

    it('replays the files in LSN order', async () => {
      const dir = tempDir();
      writeFileSync(join(dir, name(1)), records(1, 3));
      writeFileSync(join(dir, name(4)), records(4, 5));
      const engine = await open(dir);
      expect(await engine.client.db('d').collection('c').countDocuments()).toBe(4);
    });

    it('drops the torn tail of a file followed only by the empty file a rotation had just created', async () => {
      const dir = tempDir();
      const torn = records(1, 3);
      writeFileSync(join(dir, name(1)), torn.subarray(0, torn.length - 4));
      writeFileSync(join(dir, name(4)), Buffer.alloc(0));
      const engine = await open(dir);
      expect(await engine.client.db('d').collection('c').countDocuments()).toBe(1);
      expect(journalFiles(dir)).toEqual([name(1)]);
    });

    it('refuses to start on damage before the last file, or on a gap in the LSNs', async () => {
      const damaged = tempDir();
      const first = records(1, 3);
      first[first.length - 1] ^= 0xff;
      writeFileSync(join(damaged, name(1)), first);
      writeFileSync(join(damaged, name(4)), records(4, 5));
      await expect(startEmbeddedMongo({ dataDir: damaged })).rejects.toThrow(/record whose checksum does not match .* before the last journal file/);

      const gap = tempDir();
      writeFileSync(join(gap, name(1)), records(1, 3));
      writeFileSync(join(gap, name(5)), records(5, 6));
      await expect(startEmbeddedMongo({ dataDir: gap })).rejects.toThrow(/starts at LSN 5, but the data before it ends at LSN 3/);
    });
  });

  it('takes a snapshot when the journal passes its limit, deletes the journal it covers, and keeps writes made meanwhile', async () => {
    const dir = tempDir();
    const live = await open(dir, { journalSizeLimit: 32 * 1024 });
    const coll = live.db.collection('c');
    const filler = 'x'.repeat(1000);
    for (let round = 0; round < 10; round++) {
      await Promise.all(Array.from({ length: 10 }, (_, i) => coll.insertOne({ _id: round * 10 + i, filler } as Document)));
    }
    await coll.deleteMany({ _id: { $lt: 10 } } as Document);
    const acknowledged = await coll.find().toArray();
    for (let i = 0; i < 50 && !live.log.some((line) => line.includes('snapshot at LSN')); i++) await new Promise((r) => setTimeout(r, 20));
    expect(live.log.some((line) => /snapshot at LSN \d+ written/.test(line))).toBe(true);
    expect(existsSync(join(dir, 'snapshot.bin'))).toBe(true);
    const journalBytes = journalFiles(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
    expect(journalBytes).toBeLessThan(2 * 32 * 1024);

    const recovered = await open(crashImage(dir));
    expect(await recovered.db.collection('c').find().toArray()).toEqual(acknowledged);
    expect(acknowledged).toHaveLength(90);
  });

  it('writes a snapshot at a clean stop, so the next start reads one file', async () => {
    const dir = tempDir();
    const first = await open(dir);
    await first.db.collection('c').insertMany([{ a: 1 }, { a: 2 }]);
    await close(first);
    expect(existsSync(join(dir, 'snapshot.bin'))).toBe(true);
    expect(journalFiles(dir).map((f) => statSync(join(dir, f)).size)).toEqual([0]);
    const second = await open(dir);
    expect(second.log.some((line) => /snapshot at LSN \d+ \(2 documents\), 0 journal records replayed/.test(line))).toBe(true);
  });

  it('fails the waiting write and refuses later ones when the journal cannot be written, and keeps serving reads', async () => {
    const dir = tempDir();
    // A journal file on /dev/full: every write to it fails with ENOSPC, as on a full disk.
    symlinkSync('/dev/full', join(dir, `journal-${'1'.padStart(16, '0')}.bin`));
    const engine = await open(dir);
    const journalFailed = { code: 1, message: expect.stringContaining('the journal could not be written (ENOSPC') };
    await expect(engine.db.collection('c').insertOne({ a: 1 })).rejects.toMatchObject(journalFailed);
    await expect(engine.db.collection('c').insertOne({ a: 2 })).rejects.toMatchObject({ code: 1, message: expect.stringContaining('writes are refused until the engine restarts') });
    expect(await engine.db.collection('c').countDocuments({ a: 2 })).toBe(0);
    expect(await engine.client.db('admin').command({ ping: 1 })).toEqual({ ok: 1 });
  });

  describe('lock file', () => {
    it('refuses a second engine on the same directory with a clear message', async () => {
      const dir = tempDir();
      await open(dir);
      await expect(startEmbeddedMongo({ dataDir: dir })).rejects.toThrow(`the data directory ${dir} is in use by another engine in this process`);
    });

    it('refuses while another live process holds the lock, and takes over a lock its holder left behind', async () => {
      const dir = tempDir();
      const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
      try {
        writeFileSync(join(dir, 'engine.lock'), JSON.stringify({ pid: holder.pid, host: hostname() }));
        await expect(startEmbeddedMongo({ dataDir: dir })).rejects.toThrow(new RegExp(`in use by process ${holder.pid} \\(lock file .*engine\\.lock\\): only one engine may open it`));
      } finally {
        holder.kill('SIGKILL');
        await new Promise((resolve) => holder.once('exit', resolve));
      }
      const engine = await open(dir);
      await engine.db.collection('c').insertOne({ ok: true });
      expect(JSON.parse(readFileSync(join(dir, 'engine.lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    });
  });
});
