import { Body, Controller, Get, Header, Logger, Param, Post, StreamableFile, UploadedFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import {
  ApiBearerAuth,
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { ApiReplyWindowClosedResponse } from '../channels/reply-window.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { RateLimitWeight } from '../common/rate-limit/rate-limit.guard.js';
import { MessageView } from '../messages/message.view.js';
import { SEND_MEDIA_FORM_SCHEMA, SendMediaDto } from './dto/send-media.dto.js';
import { contentDisposition } from './file-name.js';
import type { UploadedMediaFile } from './gridfs-storage.engine.js';
import { MEDIA_FORMATS } from './media-formats.js';
import { MediaService } from './media.service.js';

/** An upload streams up to MEDIA_MAX_BYTES into GridFS while sniffing its type. */
export const SEND_MEDIA_WEIGHT = 5;

@ApiTags('Media')
@ApiBearerAuth()
@ApiProblemResponses(401, 429)
@Controller()
export class MediaController {
  private readonly logger = new Logger('Media');

  constructor(private readonly media: MediaService) {}

  @Post('messages/send-media')
  @RateLimitWeight(SEND_MEDIA_WEIGHT)
  @UseInterceptors(FileInterceptor('file'))
  @ApiOperation({
    summary: 'Send a file (image, video, audio or document) as a message of a conversation',
    description:
      'multipart/form-data. The file is streamed into storage (GridFS) as it arrives. Its real type is read from its ' +
      'first bytes and must be on the allow-list and match `type`; a file larger than MEDIA_MAX_BYTES answers 413. ' +
      'The message answered carries `media.url`, to GET with your bearer token. On a channel with a reply window, ' +
      'only while the conversation’s window is open (409 `reply-window-closed` otherwise, and the file is not kept). ' +
      `Counts ${SEND_MEDIA_WEIGHT} requests against the rate limits.`,
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: SEND_MEDIA_FORM_SCHEMA })
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
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Content-Security-Policy', "default-src 'none'; sandbox")
  @Header('Cache-Control', 'private, max-age=3600')
  @ApiOperation({
    summary: 'Download a media file of your company',
    description: 'Streams the file with its content type; images, video and audio inline, documents as attachments.',
  })
  @ApiProduces(...MEDIA_FORMATS.map((format) => format.mime))
  @ApiOkResponse({
    description: 'The file',
    schema: { type: 'string', format: 'binary' },
    headers: {
      'Content-Type': { description: 'The type read from the file content', schema: { type: 'string' } },
      'Content-Length': { description: 'Size in bytes', schema: { type: 'integer' } },
      'Content-Disposition': { description: 'inline or attachment, with the file name', schema: { type: 'string' } },
    },
  })
  @ApiProblemResponses(notFound('Media'))
  async download(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<StreamableFile> {
    const { media, stream } = await this.media.open(agent.companyId, id);
    return new StreamableFile(stream, {
      type: media.mimeType,
      length: media.size,
      disposition: contentDisposition(media.format, media.fileName),
    }).setErrorHandler((error, response) => {
      // Headers (with Content-Length) may be out already: closing the connection is the only way to
      // tell the client that the body is incomplete rather than let it keep a truncated file.
      this.logger.error({ err: error, mediaId: id }, 'Media download failed while streaming');
      response.destroy?.();
    });
  }
}
