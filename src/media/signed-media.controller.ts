import { Controller, Get, Header, Param, Res, StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/decorators/public.decorator.js';
import { ApiProblemResponses, notFound } from '../common/errors/api-error-responses.js';
import { INVALID_LINK_MESSAGE } from './media-links.js';
import { mediaFile, MediaFileResponse } from './media-routes.js';
import { MediaService } from './media.service.js';

/** Files served through signed links, which browsers follow without credentials (contract section 14). */
@ApiTags('Media')
@Public()
@Controller()
export class SignedMediaController {
  constructor(private readonly media: MediaService) {}

  @Get('media/signed/:token')
  @ApiParam({ name: 'token', description: 'The last part of a `downloadUrl`', example: 'not-a-valid-token' })
  @MediaFileResponse()
  @Header('Referrer-Policy', 'no-referrer')
  @ApiOperation({
    summary: 'Download a media file through a signed link (no credentials)',
    description:
      'The `media.downloadUrl` of a message in a REST answer, for browsers (`<img src>`, `<video src>`, a download ' +
      'link), which cannot send a bearer token. It serves the file until `media.downloadUrlExpiresAt` (at least ' +
      'MEDIA_URL_TTL_SECONDS, default 3600, after the answer), and may be cached privately until then. A link with ' +
      'any character changed answers 403; an expired one 410 (read the message again for a fresh link); a file ' +
      'removed since answers 404. Rate-limited by client address like every request without credentials.',
  })
  @ApiProblemResponses([403, INVALID_LINK_MESSAGE], notFound('Media'), 410, 429)
  async downloadSigned(@Param('token') token: string, @Res({ passthrough: true }) response: Response): Promise<StreamableFile> {
    const { download, secondsLeft } = await this.media.openSigned(token);
    response.setHeader('Cache-Control', `private, max-age=${secondsLeft}`);
    return mediaFile(download);
  }
}
