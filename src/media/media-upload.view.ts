import type { MediaType } from '../messages/message.schema.js';
import type { StoredMedia } from './media-storage.js';

/** A file uploaded through Interface B, waiting for the message that refers to it (`mediaId`). */
export class UploadedMediaView {
  /**
   * Send it as `mediaId` with the message
   * @example 6650f0c2a1b2c3d4e5f60720
   */
  id: string;
  /** What the content is, read from its first bytes: the message's `type` must be this one */
  type: MediaType;
  /**
   * The type read from the content (never the one the part declared)
   * @example image/jpeg
   */
  mimeType: string;
  /**
   * Bytes
   * @example 48213
   */
  size: number;
  /**
   * The name it is served under: the part's file name without any path, its extension matching the content
   * @example photo.jpg
   */
  fileName: string;
  /** When it is removed if no message refers to it by then (MEDIA_UPLOAD_TTL_HOURS after the upload) */
  expiresAt: string;

  static from(media: StoredMedia & { expiresAt: Date }): UploadedMediaView {
    return {
      id: media.id.toHexString(),
      type: media.format.kind,
      mimeType: media.mimeType,
      size: media.size,
      fileName: media.fileName,
      expiresAt: media.expiresAt.toISOString(),
    };
  }
}
