import { Injectable, NotFoundException } from '@nestjs/common';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { scopeAllows } from '../events/event-channel.js';
import type { MediaType, MessageMedia } from '../messages/message.schema.js';
import { Clock } from '../lanes/clock.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import type { UploadedMediaFile } from './gridfs-storage.engine.js';
import { kindOfUpload } from './media-formats.js';
import { MediaStorage, type MediaDownload, type StoredMedia } from './media-storage.js';
import { UploadedMediaView } from './media-upload.view.js';

/**
 * How long a message about to refer to an upload keeps it from being removed: far longer than the few milliseconds
 * between the check and the message's write, so an upload that expires meanwhile is still there for it.
 */
export const UPLOAD_HOLD_MS = 15 * 60_000;

/** The file of an inbound media message: the message's type (the file's kind) and the file as the message shows it. */
export interface AttachedMedia {
  type: MediaType;
  file: MessageMedia;
}

/**
 * Media for channel connectors (Interface B, contract section 13): a file uploaded first (it waits for its
 * message until MEDIA_UPLOAD_TTL_HOURS, see MediaUploadExpiry), then named by the inbound message that carries it;
 * and any file of the company downloaded by a key with `media:read`.
 */
@Injectable()
export class MediaUploadsService {
  constructor(
    private readonly storage: MediaStorage,
    private readonly messages: MessagesRepository,
    private readonly clock: Clock,
  ) {}

  /**
   * The upload just stored (streamed in, sniffed and capped on its way: see GridFsStorageEngine). A `type` the
   * content is not removes it again (400).
   */
  async uploaded(key: ApiKeyPrincipal, file: UploadedMediaFile | undefined, declared: MediaType | undefined): Promise<UploadedMediaView> {
    if (!file) throw new RequestValidationException([{ field: 'file', message: 'file is required' }]);
    const { media } = file;
    try {
      kindOfUpload(media.format, declared);
    } catch (refusal) {
      await this.storage.delete(key.companyId, media.id);
      throw refusal;
    }
    if (!media.expiresAt) throw new Error('An upload through an API key must wait for its message');
    return UploadedMediaView.from({ ...media, expiresAt: media.expiresAt });
  }

  /**
   * The upload `mediaId` names, for an inbound message of `declared` type (or of its kind when omitted), held for it
   * (UPLOAD_HOLD_MS). 400 on `mediaId` for an id that is not an upload of the company (missing, another company's,
   * expired), or a file a message already refers to; 400 on `type` for a type that is not the file's kind. A
   * message written at the same time with the same file is refused by the messages' unique index.
   */
  async attach(companyId: CompanyId, mediaId: string, declared: MediaType | undefined): Promise<AttachedMedia> {
    const now = this.clock.now();
    const media = await this.storage.find(companyId, mediaId);
    if (!media || (media.expiresAt && media.expiresAt <= now)) {
      throw new RequestValidationException([
        { field: 'mediaId', message: `mediaId ${mediaId} is not an upload of your company: upload the file with POST /api/external/media first` },
      ]);
    }
    if (declared && declared !== media.format.kind) {
      throw new RequestValidationException([
        { field: 'type', message: `type is ${declared}, but media ${mediaId} is ${media.mimeType}, a ${media.format.kind}: send type ${media.format.kind}` },
      ]);
    }
    const used = (await this.messages.byMedia(companyId, media.id)) !== null;
    if (used || !(await this.storage.hold(companyId, media.id, now, new Date(now.getTime() + UPLOAD_HOLD_MS)))) {
      throw alreadyUsed(mediaId);
    }
    return {
      type: media.format.kind,
      file: { id: media.id, fileName: media.fileName, mimeType: media.mimeType, size: media.size },
    };
  }

  /**
   * Any file of the key's company, outbound ones included. A channel-scoped key reads the files of messages on its
   * channels and the uploads it made itself: anything else answers 404, like another company's file.
   */
  async open(key: ApiKeyPrincipal, id: string): Promise<MediaDownload> {
    const download = await this.storage.open(key.companyId, id);
    if (!download) throw notFound(id);
    if (key.channels && !(await this.visibleToScopedKey(key, download.media))) {
      download.stream.destroy();
      throw notFound(id);
    }
    return download;
  }

  private async visibleToScopedKey(key: ApiKeyPrincipal, media: StoredMedia): Promise<boolean> {
    const message = await this.messages.byMedia(key.companyId, media.id);
    return message ? scopeAllows(key.channels, message.channel) : media.uploadedBy.toHexString() === key.apiKeyId;
  }
}

/** The refusal of a file already carried by a message (a message, found or refused by the unique index, names it). */
export function alreadyUsed(mediaId: string): RequestValidationException {
  return new RequestValidationException([
    { field: 'mediaId', message: `media ${mediaId} is already used by a message: upload the file again for another message` },
  ]);
}

function notFound(id: string): NotFoundException {
  return new NotFoundException(`Media ${id} not found`);
}
