import { applyDecorators, Header, Logger, StreamableFile } from '@nestjs/common';
import { ApiOkResponse, ApiProduces } from '@nestjs/swagger';
import { contentDisposition } from './file-name.js';
import { MEDIA_FORMATS } from './media-formats.js';
import type { MediaDownload } from './media-storage.js';

const logger = new Logger('Media');

/**
 * The headers and OpenAPI answer of a route that streams a stored file (both interfaces): never sniffed nor run by
 * a browser, cached by the caller only.
 */
export const MediaFileResponse = () =>
  applyDecorators(
    Header('X-Content-Type-Options', 'nosniff'),
    Header('Content-Security-Policy', "default-src 'none'; sandbox"),
    Header('Cache-Control', 'private, max-age=3600'),
    ApiProduces(...MEDIA_FORMATS.map((format) => format.mime)),
    ApiOkResponse({
      description: 'The file',
      schema: { type: 'string', format: 'binary' },
      headers: {
        'Content-Type': { description: 'The type read from the file content', schema: { type: 'string' } },
        'Content-Length': { description: 'Size in bytes', schema: { type: 'integer' } },
        'Content-Disposition': { description: 'inline or attachment, with the file name', schema: { type: 'string' } },
      },
    }),
  );

/** The file as the response body, with its content type, length and disposition. */
export function mediaFile({ media, stream }: MediaDownload): StreamableFile {
  return new StreamableFile(stream, {
    type: media.mimeType,
    length: media.size,
    disposition: contentDisposition(media.format, media.fileName),
  }).setErrorHandler((error, response) => {
    // Headers (with Content-Length) may be out already: closing the connection is the only way to
    // tell the client that the body is incomplete rather than let it keep a truncated file.
    logger.error({ err: error, mediaId: media.id.toHexString() }, 'Media download failed while streaming');
    response.destroy?.();
  });
}
