import { Body, Controller, Get, Header, Logger, Param, Post, Res, StreamableFile, UploadedFile, UseInterceptors } from '@nestjs/common';
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
import type { Response } from 'express';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CurrentAgent } from '../auth/decorators/principal.decorator.js';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiProblemResponses } from '../common/errors/api-error-responses.js';
import { RateLimitWeight } from '../common/rate-limit/rate-limit.guard.js';
import { MessageView } from '../messages/message.view.js';
import { SEND_MEDIA_FORM_SCHEMA, SendMediaDto } from './dto/send-media.dto.js';
import { contentDisposition } from './file-name.js';
import type { UploadedMediaFile } from './gridfs-storage.engine.js';
import { MEDIA_FORMATS } from './media-formats.js';
import type { MediaDownload } from './media-storage.js';
import { MediaService } from './media.service.js';

/** An upload streams up to MEDIA_MAX_BYTES into GridFS while sniffing its type. */
export const SEND_MEDIA_WEIGHT = 5;

const FILE_RESPONSE = {
  description: 'The file',
  schema: { type: 'string', format: 'binary' },
  headers: {
    'Content-Type': { description: 'The type read from the file content', schema: { type: 'string' } },
    'Content-Length': { description: 'Size in bytes', schema: { type: 'integer' } },
    'Content-Disposition': { description: 'inline or attachment, with the file name', schema: { type: 'string' } },
  },
};

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
      'The message answered carries `media.url`, to GET with your bearer token. ' +
      `Counts ${SEND_MEDIA_WEIGHT} requests against the rate limits.`,
  })
  @ApiConsumes('multipart/form-data')
  @ApiBody({ schema: SEND_MEDIA_FORM_SCHEMA })
  @ApiCreatedResponse({ type: MessageView })
  @ApiProblemResponses(400, 413, 415)
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
  @ApiOkResponse(FILE_RESPONSE)
  @ApiProblemResponses(404)
  async download(@CurrentAgent() agent: AgentPrincipal, @Param('id') id: string): Promise<StreamableFile> {
    return this.stream(await this.media.open(agent.companyId, id));
  }

  @Get('media/signed/:token')
  @Public()
  @Header('X-Content-Type-Options', 'nosniff')
  @Header('Content-Security-Policy', "default-src 'none'; sandbox")
  @Header('Referrer-Policy', 'no-referrer')
  @ApiOperation({
    summary: 'Download a media file through a signed link (no credentials)',
    description:
      'The `media.downloadUrl` of a message in a REST answer, for browsers (`<img src>`, `<video src>`, a download ' +
      'link), which cannot send a bearer token. It serves the file until `media.downloadUrlExpiresAt` (at least ' +
      'MEDIA_URL_TTL_SECONDS, default 3600, after the answer), and may be cached privately until then. A link with ' +
      'any character changed answers 403; an expired one 410 (read the message again for a fresh link); a file ' +
      'removed since, 404. Rate-limited by client address like every request without credentials.',
  })
  @ApiProduces(...MEDIA_FORMATS.map((format) => format.mime))
  @ApiOkResponse(FILE_RESPONSE)
  @ApiProblemResponses(403, 404, 410)
  async downloadSigned(@Param('token') token: string, @Res({ passthrough: true }) response: Response): Promise<StreamableFile> {
    const { download, secondsLeft } = await this.media.openSigned(token);
    response.setHeader('Cache-Control', `private, max-age=${secondsLeft}`);
    return this.stream(download);
  }

  private stream({ media, stream }: MediaDownload): StreamableFile {
    return new StreamableFile(stream, {
      type: media.mimeType,
      length: media.size,
      disposition: contentDisposition(media.format, media.fileName),
    }).setErrorHandler((error, response) => {
      // Headers (with Content-Length) may be out already: closing the connection is the only way to
      // tell the client that the body is incomplete rather than let it keep a truncated file.
      this.logger.error({ err: error, mediaId: media.id.toHexString() }, 'Media download failed while streaming');
      response.destroy?.();
    });
  }
}
