import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsEmail, IsString, Length, MaxLength } from 'class-validator';
import {
  ATTRIBUTES_SCHEMA,
  IsContactAttributes,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  NormalizeTags,
  Trim,
  type AttributeValue,
} from './contact-fields.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export const PHONE_DESCRIPTION =
  'Stored in E.164 (e.g. "+14155552671"); spaces, dashes, dots and parentheses are ignored, and digits without "+" ' +
  '(or with "00") are read as an international number. Must be a possible number for its country code; no extension.';

/** At least one of name, email or phone is required (checked by the service). */
export class CreateContactDto {
  /** @example "Grace Hopper" */
  @IsOmittable()
  @Trim()
  @IsString()
  @Length(1, 200)
  name?: string;

  /**
   * Stored lower-cased; unique in the company
   * @example grace@example.com
   */
  @IsOmittable()
  @Trim()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  @ApiPropertyOptional({
    example: '+1 415 555 2671',
    maxLength: 50,
    description: `${PHONE_DESCRIPTION} Unique in the company.`,
  })
  @IsOmittable()
  @IsString()
  @Length(1, 50)
  phone?: string;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_TAGS,
    example: ['vip'],
    description: `At most ${MAX_TAGS} tags of 1 to ${MAX_TAG_LENGTH} characters; trimmed, repeats dropped`,
  })
  @IsOmittable()
  @NormalizeTags()
  @IsArray()
  @ArrayMaxSize(MAX_TAGS)
  @IsString({ each: true })
  @Length(1, MAX_TAG_LENGTH, { each: true })
  tags?: string[];

  @ApiPropertyOptional(ATTRIBUTES_SCHEMA)
  @IsOmittable()
  @IsContactAttributes()
  attributes?: Record<string, AttributeValue>;
}
