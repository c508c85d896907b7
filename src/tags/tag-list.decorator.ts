import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Length } from 'class-validator';
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

/** `tags=a,b` (or the parameter repeated): the distinct non-blank names; anything but strings is left to the validators. */
function splitTags({ value }: { value: unknown }): unknown {
  const parts = Array.isArray(value) ? value : [value];
  if (!parts.every((part) => typeof part === 'string')) return value;
  return normalizeTags(parts.flatMap((part: string) => part.split(',')));
}

/**
 * A `tags` query filter: comma-separated tags, records having every one of them. `records` names them in the
 * description (documented here for the same reason as IsTagList).
 */
export const IsTagFilter = (records: string) =>
  applyDecorators(
    ApiPropertyOptional({
      type: String,
      minLength: 1,
      description: `Comma-separated tags (at most ${MAX_TAGS}), e.g. \`vip,billing\`: only ${records} having every one of them`,
    }),
    IsOptional(),
    Transform(splitTags),
    IsArray(),
    ArrayMaxSize(MAX_TAGS),
    IsString({ each: true }),
    Length(1, MAX_TAG_LENGTH, { each: true }),
  );
