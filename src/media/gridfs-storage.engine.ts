import type { Request } from 'express';
import type { StorageEngine } from 'multer';
import { Types } from 'mongoose';
import type { AuthPrincipal } from '../auth/auth-principal.js';
import type { Clock } from '../lanes/clock.js';
import type { DurableTimers } from '../lanes/durable-timers.js';
import type { MediaStorage, StoredMedia } from './media-storage.js';
import { expireUploadAt } from './media-upload-expiry.js';

/** The multer file of a media upload, once stored: multer merges `media` into its file object. */
export type UploadedMediaFile = Express.Multer.File & { media: StoredMedia };

/**
 * A multer storage engine that streams each file part straight into MediaStorage (GridFS) as
 * busboy parses it, for the authenticated caller's company (the guards run before multer).
 * An agent's upload is its message's at once (send-media); an API key's waits for the message
 * that will name it, `uploadTtlMs` at most (POST /api/external/media, then /api/external/messages).
 * multer calls `_removeFile` for files it stored when the request fails later (a refused field, a
 * second file), and Nest does when the route's pipes refuse the request.
 */
export class GridFsStorageEngine implements StorageEngine {
  constructor(
    private readonly storage: MediaStorage,
    private readonly maxBytes: number,
    private readonly uploadTtlMs: number,
    private readonly timers: DurableTimers,
    private readonly clock: Clock,
  ) {}

  _handleFile(
    request: Request,
    file: Express.Multer.File,
    callback: (error?: unknown, info?: Partial<UploadedMediaFile>) => void,
  ): void {
    const caller = request.user as AuthPrincipal;
    this.store(caller, file).then(
      (media) => callback(null, { media, size: media.size, mimetype: media.mimeType }),
      (error: unknown) => callback(error),
    );
  }

  /** An API key's upload gets its id and its expiry timer before its bytes are stored: no crash leaves it behind. */
  private async store(caller: AuthPrincipal, file: Express.Multer.File): Promise<StoredMedia> {
    const options = { originalName: file.originalname, maxBytes: this.maxBytes };
    if (caller.kind === 'agent') return this.storage.upload(caller.companyId, file.stream, { ...options, uploadedBy: caller.agentId });
    const id = new Types.ObjectId();
    const expiresAt = new Date(this.clock.now().getTime() + this.uploadTtlMs);
    await expireUploadAt(this.timers, caller.companyId, id, expiresAt);
    return this.storage.upload(caller.companyId, file.stream, { ...options, uploadedBy: caller.apiKeyId, id, expiresAt });
  }

  _removeFile(request: Request, file: Express.Multer.File, callback: (error: Error | null) => void): void {
    const caller = request.user as AuthPrincipal;
    const { media } = file as UploadedMediaFile;
    this.storage.delete(caller.companyId, media.id).then(
      () => callback(null),
      (error: Error) => callback(error),
    );
  }
}
