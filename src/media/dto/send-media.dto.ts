import type { SchemaObject } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsString, MaxLength } from 'class-validator';
import { MEDIA_TYPES, type MediaType } from '../../messages/message.schema.js';
import { describeAllowedFormats } from '../media-formats.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export const MAX_CAPTION_LENGTH = 1024;

/** The text fields of the multipart form; the `file` part is read by the upload interceptor. */
export class SendMediaDto {
  /**
   * An open conversation of your company
   * @example 6650f0c2a1b2c3d4e5f60718
   */
  @IsMongoId()
  conversationId: string;

  /** Must match the file's real content; when omitted it is taken from the content */
  @IsOmittable()
  @IsIn(MEDIA_TYPES)
  type?: MediaType;

  /** @example "Your receipt" */
  @IsOmittable()
  @IsString()
  @MaxLength(MAX_CAPTION_LENGTH)
  caption?: string;
}

/** The OpenAPI schema of the whole multipart form, `file` included. */
export const SEND_MEDIA_FORM_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['conversationId', 'file'],
  properties: {
    conversationId: {
      type: 'string',
      example: '6650f0c2a1b2c3d4e5f60718',
      description: 'An open conversation of your company',
    },
    type: {
      type: 'string',
      enum: [...MEDIA_TYPES],
      description: "Must match the file's real content; when omitted it is taken from the content",
    },
    caption: { type: 'string', maxLength: MAX_CAPTION_LENGTH, example: 'Your receipt' },
    file: {
      type: 'string',
      format: 'binary',
      description:
        'One file, at most MEDIA_MAX_BYTES (16 MiB by default). Its type is read from its first bytes (the part\'s ' +
        `Content-Type and file name are not trusted) and must be one of ${describeAllowedFormats()}.`,
    },
  },
};
