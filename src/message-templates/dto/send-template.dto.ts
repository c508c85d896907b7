import { ArrayMaxSize, IsArray, IsString, Length } from 'class-validator';
import { IsBcp47Language } from '../../settings/dto/settings.validators.js';
import { IsTemplateName } from './template-fields.js';
import { IsOmittable } from '../../common/dto-decorators.js';

/** An approved template of the conversation's channel, named, with the values of its placeholders. */
export class SendTemplateDto {
  @IsTemplateName()
  name: string;

  /**
   * BCP 47, any case
   * @example en-US
   */
  @IsString()
  @IsBcp47Language()
  language: string;

  /**
   * The values of the placeholders, `{{1}}` first: exactly as many as the template has (none: leave it out)
   * @example ["Grace", "1042"]
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  @Length(1, 1024, { each: true })
  variables?: string[];
}
