import { Injectable, NotFoundException } from '@nestjs/common';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { MediaLinks } from './media-links.js';
import type { MessageView } from '../messages/message.view.js';
import { MessagesService } from '../messages/messages.service.js';
import type { SendMediaDto } from './dto/send-media.dto.js';
import type { UploadedMediaFile } from './gridfs-storage.engine.js';
import { kindOfUpload } from './media-formats.js';
import { MediaStorage, type MediaDownload } from './media-storage.js';

@Injectable()
export class MediaService {
  constructor(
    private readonly storage: MediaStorage,
    private readonly messages: MessagesService,
    private readonly links: MediaLinks,
  ) {}

  /**
   * Sends an already stored file as a message of the conversation. The file was streamed into
   * storage while the request was read, before its other fields could be checked, so whatever
   * is refused from here on (a type that does not match the content, a missing, foreign or
   * closed conversation) removes the file again.
   */
  async sendMedia(agent: AgentPrincipal, dto: SendMediaDto, file: UploadedMediaFile | undefined): Promise<MessageView> {
    if (!file) throw new RequestValidationException([{ field: 'file', message: 'file is required' }]);
    const { media } = file;
    try {
      const sent = await this.messages.sendMedia(agent, {
        conversationId: dto.conversationId,
        type: kindOfUpload(media.format, dto.type),
        caption: dto.caption || undefined,
        media: { id: media.id, fileName: media.fileName, mimeType: media.mimeType, size: media.size },
      });
      return this.links.forMessage(agent.companyId, sent);
    } catch (error) {
      await this.storage.delete(agent.companyId, media.id);
      throw error;
    }
  }

  /** 404 for a malformed, missing or foreign id. */
  async open(companyId: CompanyId, id: string): Promise<MediaDownload> {
    const download = await this.storage.open(companyId, id);
    if (!download) throw new NotFoundException(`Media ${id} not found`);
    return download;
  }

  /** The file a signed link names, with the seconds the link has left; 403 tampered, 410 expired, 404 removed since. */
  async openSigned(token: string): Promise<{ download: MediaDownload; secondsLeft: number }> {
    const { companyId, mediaId, secondsLeft } = this.links.verify(token);
    return { download: await this.open(companyId, mediaId.toHexString()), secondsLeft };
  }
}
