import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { IsChannelList } from '../../conversations/dto/conversation-fields.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from '../webhook-events.js';
import { RetryConfigDto } from './retry-config.dto.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export const WEBHOOK_URL_OPTIONS = {
  protocols: ['http', 'https'],
  require_protocol: true,
  require_valid_protocol: true,
  require_tld: false,
  allow_underscores: true,
  disallow_auth: true,
};

/** What both interfaces accept when a webhook is registered (the name's rule differs). */
export class WebhookFieldsDto {
  /**
   * http(s) only; no credentials
   * @example https://hooks.example.com/parley
   */
  @IsUrl(WEBHOOK_URL_OPTIONS, { message: 'url must be an http(s) URL without credentials' })
  @MaxLength(2048)
  url: string;

  /**
   * Dotted or Interface B names, mixed if you like; events arrive under the names listed here
   * @example ["message.received","CHAT_SENT"]
   */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_NAMES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_NAMES, { each: true })
  events: WebhookEventName[];

  @IsOptional()
  @IsChannelList(
    'Only events of conversations on these channels (as conversations name them, case-insensitive); events of no ' +
      'conversation arrive all the same. Leave it out (or, on update, send null) for every channel',
  )
  channels?: string[] | null;

  @IsOmittable()
  // ValidateNested alone takes an array and checks its items: `[{...}]` would pass and be replaced by the default.
  @IsObject()
  @ValidateNested()
  @Type(() => RetryConfigDto)
  retryConfig?: RetryConfigDto;

  /** false registers it paused */
  @ApiPropertyOptional({ default: true })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;
}

/** Interface A: `POST /v1/webhooks`. */
export class CreateWebhookDto extends WebhookFieldsDto {
  /**
   * Defaults to the URL's host
   * @example "CRM sync"
   */
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  name?: string;
}

/** Interface B: `POST /api/external/webhooks`. */
export class CreateExternalWebhookDto extends WebhookFieldsDto {
  /** @example "CRM sync" */
  @IsString()
  @Length(1, 200)
  name: string;
}
