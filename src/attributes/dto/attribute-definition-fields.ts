import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsString, Length } from 'class-validator';
import { MAX_LIST_OPTIONS } from '../attribute-definition.schema.js';

/** Documented here since the Swagger plugin does not look inside composed decorators. */
export const IsAttributeOptions = (required: boolean) =>
  applyDecorators(
    ApiProperty({
      required,
      type: [String],
      minItems: 1,
      maxItems: MAX_LIST_OPTIONS,
      description: `A list's values (list only, 1 to ${MAX_LIST_OPTIONS} of 1 to 100 characters)`,
      example: ['free', 'pro', 'enterprise'],
    }),
    IsArray(),
    ArrayMinSize(1),
    ArrayMaxSize(MAX_LIST_OPTIONS),
    ArrayUnique(),
    IsString({ each: true }),
    Length(1, 100, { each: true }),
  );
