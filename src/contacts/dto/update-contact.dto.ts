import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsEmail, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import {
  ATTRIBUTES_SCHEMA,
  IsContactAttributes,
  Trim,
  type AttributeValue,
} from './contact-fields.js';
import { PHONE_DESCRIPTION } from './create-contact.dto.js';
import { IsOmittable } from '../../common/dto-decorators.js';
import { IsTagList } from '../../tags/tag-list.decorator.js';

/**
 * Only the fields sent change. `null` clears name, email or phone (the contact must keep at least
 * one of them); `tags` and `attributes` replace the whole list or object.
 */
export class UpdateContactDto {
  /** Admins only: true holds the contact (its erasure answers 409, retention skips it), false lifts the hold */
  @IsOptional()
  @IsBoolean()
  legalHold?: boolean;

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
    // The plugin adds `nullable` and the limits; the type must be given, as `string | null` has no runtime type.
    type: String,
    example: '+1 415 555 2671',
    description: `${PHONE_DESCRIPTION} Unique in the company; null clears it.`,
  })
  @IsOptional()
  @IsString()
  @Length(1, 50)
  phone?: string | null;

  @IsOmittable()
  @IsTagList('Replaces every tag')
  tags?: string[];

  @ApiPropertyOptional({ ...ATTRIBUTES_SCHEMA, description: `Replaces the whole object. ${ATTRIBUTES_SCHEMA.description}` })
  @IsOmittable()
  @IsContactAttributes()
  attributes?: Record<string, AttributeValue>;
}
