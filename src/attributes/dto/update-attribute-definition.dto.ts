import { ApiHideProperty } from '@nestjs/swagger';
import { IsBoolean, IsOptional, IsString, Length } from 'class-validator';
import { IsOmittable, NeverChanges } from '../../common/dto-decorators.js';
import { IsAttributeOptions } from './attribute-definition-fields.js';

const INSTEAD = 'define a new attribute (and archive this one) instead';

/**
 * Only the fields sent change. `model`, `key` and `type` never change: sending one answers 400 (define a new
 * attribute and archive this one instead).
 */
export class UpdateAttributeDefinitionDto {
  @ApiHideProperty()
  @NeverChanges(INSTEAD)
  model?: never;

  @ApiHideProperty()
  @NeverChanges(INSTEAD)
  key?: never;

  @ApiHideProperty()
  @NeverChanges(INSTEAD)
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
