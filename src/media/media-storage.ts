import { Injectable, PayloadTooLargeException } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { fileTypeStream } from 'file-type';
import { mongo, type Connection, type Types } from 'mongoose';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { parseObjectId, toObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { storedFileName } from './file-name.js';
import { describeAllowedFormats, mediaFormatOf, type MediaFormat } from './media-formats.js';

export const MEDIA_BUCKET = 'media';

/** Bytes read before deciding what a file is; file-type's own default sample. */
const SNIFF_SAMPLE_BYTES = 4100;

/** What `media.files` documents carry in `metadata`. */
interface MediaMetadata {
  companyId: Types.ObjectId;
  /** The agent, or the API key, that uploaded it. */
  uploadedBy: Types.ObjectId;
  mimeType: string;
  /**
   * An upload that waits for a message to refer to it (Interface B's two steps): when it is removed if none does.
   * Unset on a file a message refers to.
   */
  expiresAt?: Date;
}

export interface StoredMedia {
  id: Types.ObjectId;
  fileName: string;
  mimeType: string;
  size: number;
  format: MediaFormat;
  uploadedBy: Types.ObjectId;
  /** Set while the file waits for its message (see MediaMetadata). */
  expiresAt: Date | null;
}


export interface MediaDownload {
  media: StoredMedia;
  stream: Readable;
}

export interface UploadOptions {
  /** The name the client gave the file; only a hint, cleaned up and corrected to the real type. */
  originalName?: string;
  uploadedBy: string;
  maxBytes: number;
  /** Makes it an upload that waits for its message until then (see MediaMetadata.expiresAt). */
  expiresAt?: Date;
  /** The file's id, when the caller chose it beforehand (an upload's expiry timer is set before its bytes arrive). */
  id?: Types.ObjectId;
}

/**
 * A web stream that reads `source` only when pulled, for file-type's `fileTypeStream`. Node 20's
 * `Readable.toWeb` reads ahead and throws "Controller is already closed" when the web stream is
 * cancelled while data is flowing, which is what refusing a file after its first bytes does.
 */
function pullStream(source: Readable): ReadableStream<Uint8Array> {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}

/** Passes bytes through and fails once more than `maxBytes` went by. */
class ByteLimit extends Transform {
  bytes = 0;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.maxBytes) {
      callback(new PayloadTooLargeException(`The file is larger than the limit of ${this.maxBytes} bytes`));
      return;
    }
    callback(null, chunk);
  }
}

/**
 * Media files in MongoDB GridFS (bucket "media"). GridFS is used through the driver, beneath
 * Mongoose and its tenant-scope plugin, so this class is the one tenant-scoped store outside
 * TenantRepository: every method takes the company id first, every file carries it in
 * `metadata.companyId`, and a file of another company is treated exactly like a missing one.
 * Files are looked up by `_id` (plus that company check), which the `_id` index serves; an upload waiting for a
 * message is removed by its own durable timer (MediaUploadExpiry), so nothing reads uploads by expiry.
 */
@Injectable()
export class MediaStorage {
  private bucketInstance?: mongo.GridFSBucket;

  constructor(@InjectConnection() private readonly connection: Connection) {}

  private get db(): mongo.Db {
    const db = this.connection.db;
    if (!db) throw new Error('The database connection is not open');
    return db;
  }

  private get bucket(): mongo.GridFSBucket {
    this.bucketInstance ??= new mongo.GridFSBucket(this.db, { bucketName: MEDIA_BUCKET });
    return this.bucketInstance;
  }

  private get files(): mongo.Collection<mongo.GridFSFile> {
    return this.db.collection<mongo.GridFSFile>(`${MEDIA_BUCKET}.files`);
  }

  private get chunks(): mongo.Collection<mongo.GridFSChunk> {
    return this.db.collection<mongo.GridFSChunk>(`${MEDIA_BUCKET}.chunks`);
  }

  /**
   * Streams `source` into GridFS without holding it in memory: the first bytes decide the format
   * (400 unless it is on the allow-list), then every byte is counted on its way to the upload
   * stream (413 past `maxBytes`). On any failure whatever was written is removed.
   */
  async upload(companyId: CompanyId, source: Readable, options: UploadOptions): Promise<StoredMedia> {
    const sniffed = await fileTypeStream(pullStream(source), { sampleSize: SNIFF_SAMPLE_BYTES });
    const format = mediaFormatOf(sniffed.fileType?.mime);
    if (!format) {
      await sniffed.cancel();
      throw new RequestValidationException([
        {
          field: 'file',
          message: `file content is ${sniffed.fileType?.mime ?? 'not a recognised format'}; allowed: ${describeAllowedFormats()}`,
        },
      ]);
    }

    const fileName = storedFileName(options.originalName, format);
    const metadata: MediaMetadata = {
      companyId: toObjectId(companyId),
      uploadedBy: toObjectId(options.uploadedBy),
      mimeType: format.mime,
      ...(options.expiresAt ? { expiresAt: options.expiresAt } : {}),
    };
    const upload = options.id ? this.bucket.openUploadStreamWithId(options.id, fileName, { metadata }) : this.bucket.openUploadStream(fileName, { metadata });
    const counter = new ByteLimit(options.maxBytes);
    try {
      await pipeline(Readable.fromWeb(sniffed as Parameters<typeof Readable.fromWeb>[0]), counter, upload);
    } catch (error) {
      await this.discard(upload);
      throw error;
    }
    return {
      id: upload.id as Types.ObjectId,
      fileName,
      mimeType: format.mime,
      size: counter.bytes,
      format,
      uploadedBy: metadata.uploadedBy,
      expiresAt: metadata.expiresAt ?? null,
    };
  }

  /** The file of this company with this id; a malformed, missing or foreign id answers null. */
  async find(companyId: CompanyId, id: string | Types.ObjectId): Promise<StoredMedia | null> {
    const _id = typeof id === 'string' ? parseObjectId(id) : id;
    if (!_id) return null;
    const file = await this.files.findOne({ _id, 'metadata.companyId': toObjectId(companyId) });
    const metadata = file?.metadata as MediaMetadata | undefined;
    const format = mediaFormatOf(metadata?.mimeType);
    if (!file || !metadata || !format) return null;
    return {
      id: _id,
      fileName: file.filename,
      mimeType: format.mime,
      size: file.length,
      format,
      uploadedBy: metadata.uploadedBy,
      expiresAt: metadata.expiresAt ?? null,
    };
  }

  /**
   * Keeps an upload that has not expired from being removed before `until` (a message about to refer to it), in
   * one write: false when it has expired, or is no upload waiting for a message. The clean-up removes only what
   * has expired, so a message written before `until` always finds its file.
   */
  async hold(companyId: CompanyId, id: Types.ObjectId, now: Date, until: Date): Promise<boolean> {
    const held = await this.files.updateOne(
      { _id: id, 'metadata.companyId': toObjectId(companyId), 'metadata.expiresAt': { $gt: now } },
      { $max: { 'metadata.expiresAt': until } },
    );
    return held.matchedCount === 1;
  }

  /** A file a message refers to stops waiting for one: it stays as long as its message. */
  async keep(id: Types.ObjectId): Promise<void> {
    await this.files.updateOne({ _id: id }, { $unset: { 'metadata.expiresAt': 1 } });
  }

  /**
   * Removes an upload (its chunks included) if it is still expired at `now`: one held meanwhile for a message
   * is left alone. Answers whether it was removed.
   */
  async removeExpired(id: Types.ObjectId, now: Date): Promise<boolean> {
    const removed = await this.files.deleteOne({ _id: id, 'metadata.expiresAt': { $lte: now } });
    if (removed.deletedCount === 0) return false;
    await this.chunks.deleteMany({ files_id: id });
    return true;
  }

  async open(companyId: CompanyId, id: string): Promise<MediaDownload | null> {
    const media = await this.find(companyId, id);
    return media ? { media, stream: this.bucket.openDownloadStream(media.id) } : null;
  }

  /** Removes the file (its chunks included) if this company owns it; false when there was none. */
  async delete(companyId: CompanyId, id: Types.ObjectId): Promise<boolean> {
    if (!(await this.find(companyId, id))) return false;
    await this.bucket.delete(id);
    return true;
  }

  /**
   * Removes an unfinished upload: `abort` stops further chunk writes and deletes the chunks, and
   * `delete` also catches a files document in case the upload had just completed. Their own
   * failures ("nothing to abort", "file not found") must not hide the error that got us here.
   */
  private async discard(upload: mongo.GridFSBucketWriteStream): Promise<void> {
    await upload.abort().catch(() => undefined);
    await this.bucket.delete(upload.id).catch(() => undefined);
  }
}
