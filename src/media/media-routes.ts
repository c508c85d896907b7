import { applyDecorators, Header, Logger, StreamableFile, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiBody, ApiConsumes, ApiOkResponse, ApiProduces, type SchemaObject } from '@nestjs/swagger';
import { RateLimitWeight } from '../common/rate-limit/rate-limit.guard.js';
import { ReadsFiles } from '../common/unread-body.guard.js';
import { contentDisposition } from './file-name.js';
import { MEDIA_FORMATS } from './media-formats.js';
import type { MediaDownload } from './media-storage.js';

const logger = new Logger('Media');

/** An upload streams up to MEDIA_MAX_BYTES into GridFS while sniffing its type. */
export const UPLOAD_WEIGHT = 5;

/**
 * A route that takes one file (`file`, multipart/form-data, streamed into storage by the module's GridFS engine)
 * besides the text fields of `form`, counted UPLOAD_WEIGHT times against the rate limits.
 */
export const UploadsOneFile = (form: SchemaObject) =>
  applyDecorators(
    RateLimitWeight(UPLOAD_WEIGHT),
    ReadsFiles(),
    UseInterceptors(FileInterceptor('file')),
    ApiConsumes('multipart/form-data'),
    ApiBody({ schema: form }),
  );

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
