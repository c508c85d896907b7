import { IsIn, IsString, Length } from 'class-validator';
import { IsChannel } from '../../conversations/dto/conversation-fields.js';
import { IsBcp47Language } from '../../settings/dto/settings.validators.js';
import { TEMPLATE_CATEGORIES, type TemplateCategory } from '../message-template.schema.js';
import { IsTemplateName } from './template-fields.js';

export class CreateMessageTemplateDto {
  /**
   * The key of a channel of your company (POST /v1/channels), lower-cased
   * @example whatsapp
   */
  @IsChannel({ required: true })
  channel: string;

  /** Lower-case letters, digits and "_"; unique with channel and language */
  @IsTemplateName()
  name: string;

  /**
   * A BCP 47 language tag, stored in canonical case
   * @example en-US
   */
  @IsString()
  @IsBcp47Language()
  language: string;

  @IsIn(TEMPLATE_CATEGORIES)
  category: TemplateCategory;

  /**
   * Placeholders {{1}}..{{n}}, numbered from 1 without gaps (each may appear more than once)
   * @example "Hi {{1}}, your order {{2}} has shipped."
   */
  @IsString()
  @Length(1, 1024)
  body: string;
}

