import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength } from 'class-validator';
import {
  ATTRIBUTES_SCHEMA,
  IsContactAttributes,
  Trim,
  type AttributeValue,
} from './contact-fields.js';
import { IsOmittable } from '../../common/dto-decorators.js';
import { IsTagList } from '../../tags/tag-list.decorator.js';

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
    description: `${PHONE_DESCRIPTION} Unique in the company.`,
  })
  @IsOmittable()
  @IsString()
  @Length(1, 50)
  phone?: string;

  @IsOmittable()
  @IsTagList("The contact's tags")
  tags?: string[];

  @ApiPropertyOptional(ATTRIBUTES_SCHEMA)
  @IsOmittable()
  @IsContactAttributes()
  attributes?: Record<string, AttributeValue>;
}
