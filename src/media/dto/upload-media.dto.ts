import type { SchemaObject } from '@nestjs/swagger';
import { IsIn } from 'class-validator';
import { MEDIA_TYPES, type MediaType } from '../../messages/message.schema.js';
import { describeAllowedFormats } from '../media-formats.js';
import { IsOmittable } from '../../common/dto-decorators.js';

/** The text field of `POST /api/external/media`; the `file` part is read by the upload interceptor. */
export class UploadMediaDto {
  /** Must match the file's real content; when omitted it is taken from the content */
  @IsOmittable()
  @IsIn(MEDIA_TYPES)
  type?: MediaType;
}

/** The OpenAPI schema of the whole multipart form, `file` included. */
export const UPLOAD_MEDIA_FORM_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['file'],
  properties: {
    file: {
      type: 'string',
      format: 'binary',
      description:
        "One file, at most MEDIA_MAX_BYTES (16 MiB by default). Its type is read from its first bytes (the part's " +
        `Content-Type and file name are not trusted) and must be one of ${describeAllowedFormats()}.`,
    },
    type: {
      type: 'string',
      enum: [...MEDIA_TYPES],
      description: "Must match the file's real content; when omitted it is taken from the content",
    },
  },
};
