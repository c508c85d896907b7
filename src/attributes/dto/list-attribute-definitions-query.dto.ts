import { IsIn, IsOptional } from 'class-validator';
import { ATTRIBUTE_MODELS, type AttributeModel } from '../attribute-definition.schema.js';

export class ListAttributeDefinitionsQueryDto {
  /** Only this model's definitions */
  @IsOptional()
  @IsIn(ATTRIBUTE_MODELS)
  model?: AttributeModel;
}
