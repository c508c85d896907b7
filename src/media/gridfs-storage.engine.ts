import type { Request } from 'express';
import type { StorageEngine } from 'multer';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import type { MediaStorage, StoredMedia } from './media-storage.js';

/** The multer file of a media upload, once stored: multer merges `media` into its file object. */
export type UploadedMediaFile = Express.Multer.File & { media: StoredMedia };

/**
 * A multer storage engine that streams each file part straight into MediaStorage (GridFS) as
 * busboy parses it, for the authenticated agent's company (the guards run before multer).
 * multer calls `_removeFile` for files it stored when the request fails later (a refused field, a
 * second file), and Nest does when the route's pipes refuse the request.
 */
export class GridFsStorageEngine implements StorageEngine {
  constructor(
    private readonly storage: MediaStorage,
    private readonly maxBytes: number,
  ) {}

  _handleFile(
    request: Request,
    file: Express.Multer.File,
    callback: (error?: unknown, info?: Partial<UploadedMediaFile>) => void,
  ): void {
    const agent = request.user as AgentPrincipal;
    this.storage
      .upload(agent.companyId, file.stream, {
        originalName: file.originalname,
        uploadedBy: agent.agentId,
        maxBytes: this.maxBytes,
      })
      .then(
        (media) => callback(null, { media, size: media.size, mimetype: media.mimeType }),
        (error: unknown) => callback(error),
      );
  }

  _removeFile(request: Request, file: Express.Multer.File, callback: (error: Error | null) => void): void {
    const agent = request.user as AgentPrincipal;
    const { media } = file as UploadedMediaFile;
    this.storage.delete(agent.companyId, media.id).then(
      () => callback(null),
      (error: Error) => callback(error),
    );
  }
}
