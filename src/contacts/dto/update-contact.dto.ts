import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsEmail, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import {
  ATTRIBUTES_SCHEMA,
  IsContactAttributes,
  MAX_TAG_LENGTH,
  MAX_TAGS,
  NormalizeTags,
  Trim,
  type AttributeValue,
} from './contact-fields.js';
import { PHONE_DESCRIPTION } from './create-contact.dto.js';
import { IsOmittable } from '../../common/dto-decorators.js';

/**
 * Only the fields sent change. `null` clears name, email or phone (the contact must keep at least
 * one of them); `tags` and `attributes` replace the whole list or object.
 */
export class UpdateContactDto {
  /**
   * null clears it
   * @example "Grace Hopper"
   */
  @IsOptional()
  @Trim()
  @IsString()
  @Length(1, 200)
  name?: string | null;

  /**
   * Stored lower-cased; unique in the company; null clears it
   * @example grace@example.com
   */
  @IsOptional()
  @Trim()
  @IsEmail()
  @MaxLength(320)
  email?: string | null;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: '+1 415 555 2671',
    maxLength: 50,
    description: `${PHONE_DESCRIPTION} Unique in the company; null clears it.`,
  })
  @IsOptional()
  @IsString()
  @Length(1, 50)
  phone?: string | null;

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_TAGS,
    example: ['vip', 'churn-risk'],
    description: `Replaces every tag; at most ${MAX_TAGS} of 1 to ${MAX_TAG_LENGTH} characters, trimmed, repeats dropped`,
  })
  @IsOmittable()
  @NormalizeTags()
  @IsArray()
  @ArrayMaxSize(MAX_TAGS)
  @IsString({ each: true })
  @Length(1, MAX_TAG_LENGTH, { each: true })
  tags?: string[];

  @ApiPropertyOptional({ ...ATTRIBUTES_SCHEMA, description: `Replaces the whole object. ${ATTRIBUTES_SCHEMA.description}` })
  @IsOmittable()
  @IsContactAttributes()
  attributes?: Record<string, AttributeValue>;
}
