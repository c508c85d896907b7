import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { TEMPLATE_NAME_PATTERN } from '../message-template.schema.js';

/** A template's name. Documented here since the Swagger plugin does not look inside composed decorators. */
export const IsTemplateName = () =>
  applyDecorators(
    ApiProperty({ pattern: TEMPLATE_NAME_PATTERN.source, minLength: 1, maxLength: 512, example: 'order_shipped' }),
    IsString(),
    Matches(TEMPLATE_NAME_PATTERN, { message: 'name may contain only lower-case letters, digits and "_", 1 to 512 of them' }),
  );
