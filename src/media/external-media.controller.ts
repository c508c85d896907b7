import { Body, Controller, Get, Param, Post, StreamableFile, UploadedFile, VERSION_NEUTRAL } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { ApiKeyPrincipal } from '../auth/auth-principal.js';
import { ApiKeyAuth } from '../auth/decorators/api-key-auth.decorator.js';
import { CurrentApiKey } from '../auth/decorators/principal.decorator.js';
import { RequireScopes } from '../auth/decorators/require-scopes.decorator.js';
import { ApiEnvelopeErrorResponses, notFound } from '../common/errors/api-error-responses.js';
import { ApiDataEnvelope, envelope, type DataEnvelope } from '../webhooks/dto/envelope.js';
import { UPLOAD_MEDIA_FORM_SCHEMA, UploadMediaDto } from './dto/upload-media.dto.js';
import type { UploadedMediaFile } from './gridfs-storage.engine.js';
import { mediaFile, MediaFileResponse, UPLOAD_WEIGHT, UploadsOneFile } from './media-routes.js';
import { UploadedMediaView } from './media-upload.view.js';
import { MediaUploadsService } from './media-uploads.service.js';

const ID_PARAM = { name: 'id', example: '6650f0c2a1b2c3d4e5f60720', description: 'A `mediaId` you uploaded, or a message\'s `media.id`' };

/** Interface B: the files a channel connector carries, both ways (contract section 13). */
@ApiTags('Interface B: media')
@ApiKeyAuth()
@ApiEnvelopeErrorResponses(401, 429, 500)
@Controller({ path: 'api/external/media', version: VERSION_NEUTRAL })
export class ExternalMediaController {
  constructor(private readonly uploads: MediaUploadsService) {}

  @Post()
  @ApiEnvelopeErrorResponses(400, 413)
  @RequireScopes('messages:write')
  @UploadsOneFile(UPLOAD_MEDIA_FORM_SCHEMA)
  @ApiOperation({
    summary: 'Upload a file a contact sent (image, video, audio or document), for an inbound message to carry',
    description:
      'multipart/form-data, the first of two steps as the channels’ own APIs do: upload the file here, then send ' +
      '`POST /api/external/messages` with its `id` as `mediaId`. The file is streamed into storage as it arrives; its ' +
      'real type is read from its first bytes and must be on the allow-list (and match `type` when given); a file ' +
      'larger than MEDIA_MAX_BYTES answers 413. Nothing is kept of a refused upload. An upload no message refers to ' +
      'is removed after MEDIA_UPLOAD_TTL_HOURS (24 by default; `expiresAt`); each upload serves one message. ' +
      `Counts ${UPLOAD_WEIGHT} requests against the rate limits.`,
  })
  @ApiDataEnvelope(201, UploadedMediaView, { description: 'Stored; send its `id` as `mediaId`' })
  async upload(
    @CurrentApiKey() key: ApiKeyPrincipal,
    @Body() dto: UploadMediaDto,
    @UploadedFile() file: UploadedMediaFile | undefined,
  ): Promise<DataEnvelope<UploadedMediaView>> {
    return envelope(await this.uploads.uploaded(key, file, dto.type));
  }

  @Get(':id')
  @ApiEnvelopeErrorResponses(notFound('Media', ID_PARAM.example))
  @RequireScopes('media:read')
  @MediaFileResponse()
  @ApiOperation({
    summary: 'Download a media file of your company (an agent’s attachment to send on, or an upload)',
    description:
      'API key with the `media:read` scope. Streams any file of the company, outbound ones included (a message’s ' +
      '`media.id`), with its content type; images, video and audio inline, documents as attachments. A key limited ' +
      'to channels reads the files of messages on them and its own uploads. Another company’s id answers 404.',
  })
  @ApiParam(ID_PARAM)
  async download(@CurrentApiKey() key: ApiKeyPrincipal, @Param('id') id: string): Promise<StreamableFile> {
    return mediaFile(await this.uploads.open(key, id));
  }
}
