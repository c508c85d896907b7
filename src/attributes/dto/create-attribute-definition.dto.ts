import { IsIn, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ATTRIBUTE_KEY_PATTERN, ATTRIBUTE_MODELS, ATTRIBUTE_TYPES, type AttributeModel, type AttributeType } from '../attribute-definition.schema.js';
import { IsAttributeOptions } from './attribute-definition-fields.js';

export class CreateAttributeDefinitionDto {
  /** Never changes */
  @IsIn(ATTRIBUTE_MODELS)
  model: AttributeModel;

  /**
   * `[a-z][a-z0-9_]{0,63}`, unique per model in your company (409); never changes
   * @example plan
   */
  @IsString()
  @Matches(ATTRIBUTE_KEY_PATTERN, { message: 'key must be a lower-case letter then up to 63 lower-case letters, digits or "_"' })
  key: string;

  /** @example Plan */
  @IsString()
  @Length(1, 100)
  label: string;

  /** Never changes */
  @IsIn(ATTRIBUTE_TYPES)
  type: AttributeType;

  @IsOptional()
  @IsAttributeOptions(false)
  options?: string[];

  /** @example "The subscription plan" */
  @IsOptional()
  @IsString()
  @Length(0, 500)
  description?: string;
}
