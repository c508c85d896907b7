import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsOptional,
  IsString,
  IsUrl,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from '../webhook-events.js';
import { RetryConfigDto } from './retry-config.dto.js';

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
  @ApiProperty({ example: 'https://hooks.example.com/parley', maxLength: 2048, description: 'http(s) only; no credentials' })
  @IsUrl(WEBHOOK_URL_OPTIONS, { message: 'url must be an http(s) URL without credentials' })
  @MaxLength(2048)
  url: string;

  @ApiProperty({
    enum: WEBHOOK_EVENT_NAMES,
    isArray: true,
    example: ['message.received', 'CHAT_SENT'],
    description: 'Dotted or Interface B names, mixed if you like; events arrive under the names listed here',
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_NAMES.length)
  @ArrayUnique()
  @IsIn(WEBHOOK_EVENT_NAMES, { each: true })
  events: WebhookEventName[];

  @ApiPropertyOptional({ type: RetryConfigDto })
  @IsOptional()
  @ValidateNested()
  @Type(() => RetryConfigDto)
  retryConfig?: RetryConfigDto;

  @ApiPropertyOptional({ default: true, description: 'false registers it paused' })
  @IsOptional()
  @IsBoolean()
  isActive?: boolean;
}

/** Interface A: `POST /v1/webhooks`. */
export class CreateWebhookDto extends WebhookFieldsDto {
  @ApiPropertyOptional({ example: 'CRM sync', minLength: 1, maxLength: 200, description: "Defaults to the URL's host" })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;
}

/** Interface B: `POST /api/external/webhooks`. */
export class CreateExternalWebhookDto extends WebhookFieldsDto {
  @ApiProperty({ example: 'CRM sync', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;
}
