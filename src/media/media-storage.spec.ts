import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { BadRequestException, PayloadTooLargeException } from '@nestjs/common';
import mongoose, { Types, type Connection } from 'mongoose';
import { Readable } from 'node:stream';
import { startEmbeddedMongo, type EmbeddedMongo } from '@parley/embedded-mongo';
import { MediaStorage } from './media-storage.js';

const MiB = 1024 * 1024;
const CHUNK = 64 * 1024;

/** A source that makes its chunks only when read, counting how many bytes were pulled from it. */
function lazySource(first: Buffer, totalBytes: number): { stream: Readable; pulled: () => number } {
  let pulled = 0;
  const stream = new Readable({
    read() {
      if (pulled >= totalBytes) return void this.push(null);
      const chunk = pulled === 0 ? Buffer.concat([first, Buffer.alloc(CHUNK - first.length, 7)]) : Buffer.alloc(CHUNK, 7);
      pulled += chunk.length;
      this.push(chunk);
    },
  });
  return { stream, pulled: () => pulled };
}

const PDF_HEAD = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1');

describe('MediaStorage', () => {
  let engine: EmbeddedMongo;
  let connection: Connection;
  let storage: MediaStorage;
  const acme = new Types.ObjectId().toHexString();
  const globex = new Types.ObjectId().toHexString();
  const uploader = new Types.ObjectId().toHexString();

  beforeAll(async () => {
    engine = await startEmbeddedMongo();
    connection = await mongoose.createConnection(`${engine.uri}media_storage_test`).asPromise();
    storage = new MediaStorage(connection);
  });
  afterAll(async () => {
    await connection.close();
    await engine.stop();
  });

  async function stored(): Promise<{ files: number; chunks: number }> {
    const db = connection.db!;
    return {
      files: await db.collection('media.files').countDocuments({}),
      chunks: await db.collection('media.chunks').countDocuments({}),
    };
  }

  it('streams: a file past the limit is refused after reading about the limit, not the whole file', async () => {
    const source = lazySource(PDF_HEAD, 64 * MiB);
    await expect(storage.upload(acme, source.stream, { uploadedBy: uploader, maxBytes: 2 * MiB })).rejects.toBeInstanceOf(
      PayloadTooLargeException,
    );
    expect(source.pulled()).toBeGreaterThan(2 * MiB);
    expect(source.pulled()).toBeLessThan(4 * MiB);
    expect(await stored()).toEqual({ files: 0, chunks: 0 });
  });

  it('reads no further than the sample when the content is not allowed', async () => {
    const source = lazySource(Buffer.from('PK\x03\x04', 'latin1'), 64 * MiB);
    await expect(storage.upload(acme, source.stream, { uploadedBy: uploader, maxBytes: 100 * MiB })).rejects.toBeInstanceOf(
      BadRequestException,
    );
    expect(source.pulled()).toBeLessThan(MiB);
    expect(await stored()).toEqual({ files: 0, chunks: 0 });
  });

  it('stores a file of many chunks with its company, and serves it to that company only', async () => {
    const source = lazySource(PDF_HEAD, 3 * MiB);
    const media = await storage.upload(acme, source.stream, { originalName: 'big.bin', uploadedBy: uploader, maxBytes: 3 * MiB });
    expect(media).toMatchObject({ fileName: 'big.pdf', mimeType: 'application/pdf', size: 3 * MiB });
    expect(await stored()).toEqual({ files: 1, chunks: Math.ceil((3 * MiB) / (255 * 1024)) });

    expect(await storage.find(globex, media.id)).toBeNull();
    expect(await storage.open(globex, media.id.toHexString())).toBeNull();
    expect(await storage.delete(globex, media.id)).toBe(false);
    expect(await storage.find(acme, 'not-an-id')).toBeNull();

    const download = await storage.open(acme, media.id.toHexString());
    let bytes = 0;
    for await (const chunk of download!.stream) bytes += (chunk as Buffer).length;
    expect(bytes).toBe(3 * MiB);

    expect(await storage.delete(acme, media.id)).toBe(true);
    expect(await stored()).toEqual({ files: 0, chunks: 0 });
  });
});
