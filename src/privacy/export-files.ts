import { Injectable } from '@nestjs/common';
import { InjectConnection } from '@nestjs/mongoose';
import { mongo, type Connection, type Types } from 'mongoose';
import type { Readable } from 'node:stream';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';

export const EXPORT_BUCKET = 'privacy_exports';

/**
 * The ZIPs of contact exports, in their own GridFS bucket; like media, every file carries its company in
 * `metadata.companyId` and a file of another company is treated as missing.
 */
@Injectable()
export class ExportFiles {
  private bucketInstance?: mongo.GridFSBucket;

  constructor(@InjectConnection() private readonly connection: Connection) {}

  private get bucket(): mongo.GridFSBucket {
    const db = this.connection.db;
    if (!db) throw new Error('The database connection is not open');
    this.bucketInstance ??= new mongo.GridFSBucket(db, { bucketName: EXPORT_BUCKET });
    return this.bucketInstance;
  }

  /** A stream to write the export `id` into (the id is the request's, so a rebuilt export replaces nothing twice). */
  openUpload(companyId: CompanyId, id: Types.ObjectId, fileName: string): mongo.GridFSBucketWriteStream {
    return this.bucket.openUploadStreamWithId(id, fileName, { metadata: { companyId: toObjectId(String(companyId)), mimeType: 'application/zip' } });
  }

  async open(companyId: CompanyId, id: Types.ObjectId): Promise<{ length: number; fileName: string; stream: Readable } | null> {
    const [file] = await this.bucket
      .find({ _id: id, 'metadata.companyId': toObjectId(String(companyId)) })
      .limit(1)
      .toArray();
    if (!file) return null;
    return { length: file.length, fileName: file.filename, stream: this.bucket.openDownloadStream(id) };
  }

  /** Removes the file and its chunks, if any (a half-written one included). */
  async delete(companyId: CompanyId, id: Types.ObjectId): Promise<void> {
    const [file] = await this.bucket
      .find({ _id: id, 'metadata.companyId': toObjectId(String(companyId)) })
      .limit(1)
      .toArray();
    if (file) await this.bucket.delete(id);
    else await this.connection.db!.collection(`${EXPORT_BUCKET}.chunks`).deleteMany({ files_id: id });
  }
}
