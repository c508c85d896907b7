import { ApiHideProperty } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length, ValidateIf, ValidateBy } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { IsAttributeOptions } from './attribute-definition-fields.js';

/**
 * Only the fields sent change. `model`, `key` and `type` never change: sending one answers 400 (define a new
 * attribute and archive this one instead).
 */
/** A field that may never be sent: the 400 says why, where the whitelist would only say it is unknown. */
const NeverChanges = () =>
  ValidateBy({
    name: 'neverChanges',
    validator: {
      validate: () => false,
      defaultMessage: (args) => `${args?.property} never changes: define a new attribute (and archive this one) instead`,
    },
  });

export class UpdateAttributeDefinitionDto {
  @ApiHideProperty()
  @ValidateIf((_object: object, value: unknown) => value !== undefined)
  @NeverChanges()
  model?: never;

  @ApiHideProperty()
  @ValidateIf((_object: object, value: unknown) => value !== undefined)
  @NeverChanges()
  key?: never;

  @ApiHideProperty()
  @ValidateIf((_object: object, value: unknown) => value !== undefined)
  @NeverChanges()
  type?: never;

  /** @example Plan */
  @IsOmittable()
  @IsString()
  @Length(1, 100)
  label?: string;

  @IsOmittable()
  @IsAttributeOptions(false)
  options?: string[];

  /** null clears it */
  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string | null;

  /** An archived attribute keeps its values but takes no new one */
  @IsOmittable()
  @IsBoolean()
  archived?: boolean;
}
