import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsString, Length } from 'class-validator';
import { MAX_TAG_LENGTH, MAX_TAGS, normalizeTags } from './tags.js';

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * A list of tags in a body: normalized (trimmed, blanks and repeats dropped) before the caps are checked.
 * Documented here since the Swagger plugin does not look inside composed decorators; whether the field is
 * required comes from the property's `?`.
 */
export const IsTagList = (description: string) =>
  applyDecorators(
    ApiProperty({
      type: [String],
      maxItems: MAX_TAGS,
      items: { type: 'string', minLength: 1, maxLength: MAX_TAG_LENGTH },
      description: `${description}. At most ${MAX_TAGS} tags of 1 to ${MAX_TAG_LENGTH} characters; trimmed, blank ones and repeats dropped`,
      example: ['vip', 'billing'],
    }),
    Transform(({ value }) => (isStringArray(value) ? normalizeTags(value) : value)),
    IsArray(),
    ArrayMaxSize(MAX_TAGS),
    IsString({ each: true }),
    Length(1, MAX_TAG_LENGTH, { each: true }),
  );
