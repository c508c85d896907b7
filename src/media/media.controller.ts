import { Body, Controller, Get, Param, Post, StreamableFile, UploadedFile } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse } from '../channels/reply-window.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { MessageView } from '../messages/message.view.js';
import { SEND_MEDIA_FORM_SCHEMA, SendMediaDto } from './dto/send-media.dto.js';
import type { UploadedMediaFile } from './gridfs-storage.engine.js';
import { mediaFile, MediaFileResponse, UPLOAD_WEIGHT, UploadsOneFile } from './media-routes.js';
import { MediaService } from './media.service.js';

@ApiTags('Media')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller()
export class MediaController {
  constructor(private readonly media: MediaService) {}

  @Post('messages/send-media')
  @UploadsOneFile(SEND_MEDIA_FORM_SCHEMA)
  @ApiOperation({
    summary: 'Send a file (image, video, audio or document) as a message of a conversation',
    description:
      'multipart/form-data. The file is streamed into storage (GridFS) as it arrives. Its real type is read from its ' +
      'first bytes and must be on the allow-list and match `type`; a file larger than MEDIA_MAX_BYTES answers 413. ' +
      'The message answered carries `media.url`, to GET with your bearer token. On a channel with a reply window, ' +
      'only while the conversation’s window is open (409 `reply-window-closed` otherwise, and the file is not kept). ' +
      `Counts ${UPLOAD_WEIGHT} requests against the rate limits.`,
  })
  @ApiCreatedResponse({ type: MessageView })
  @ApiProblemResponses(400, 413, 415)
  @ApiReplyWindowClosedResponse()
  send(
    @CurrentAgent() agent: AgentPrincipal,
    @Body() dto: SendMediaDto,
    @UploadedFile() file: UploadedMediaFile | undefined,
  ): Promise<MessageView> {
    return this.media.sendMedia(agent, dto, file);
  }

  @Get('media/:id')
  @MediaFileResponse()
  @ApiOperation({
    summary: 'Download a media file of your company',
    description: 'Streams the file with its content type; images, video and audio inline, documents as attachments.',
  })
  @ApiProblemResponses(notFound('Media'))
  async download(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<StreamableFile> {
    return mediaFile(await this.media.open(agent.companyId, id));
  }
}
