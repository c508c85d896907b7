import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsInt, IsMongoId, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { IsChannelKey } from '../../conversations/dto/conversation-fields.js';
import { CHANNEL_TYPES, MAX_REPLY_WINDOW_HOURS, MIN_REPLY_WINDOW_HOURS, type ChannelType } from '../channel.schema.js';

/** The optional fields of a channel, on create and on PATCH. */
export class ChannelOptionsDto {
  /**
   * The company's own address on the channel (phone number, e-mail address, page id); null for none
   * @example +14155550100
   */
  @IsOptional()
  @IsString()
  @Length(1, 320)
  address?: string | null;

  /**
   * Hours after the contact's last message during which free-form messages may be sent; null for no window.
   * Default: 24 for `whatsapp`, null otherwise. A change applies from each conversation's next inbound message
   * @example 24
   */
  @IsOptional()
  @IsInt()
  @Min(MIN_REPLY_WINDOW_HOURS)
  @Max(MAX_REPLY_WINDOW_HOURS)
  replyWindowHours?: number | null;

  /** false: proactive messages (`POST /v1/messages`) on it answer 409 */
  @ApiPropertyOptional({ default: true })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;

  /** The team whose queue conversations opened on it join; null: the company queue */
  @IsOptional()
  @IsMongoId({ message: 'teamId must be a team id or null' })
  teamId?: string | null;
}

export class CreateChannelDto extends ChannelOptionsDto {
  /** What conversations on this channel carry in `channel`; unique in your company, fixed once created */
  @IsChannelKey()
  key: string;

  /** Fixed once created */
  @IsIn(CHANNEL_TYPES)
  type: ChannelType;

  /** @example "WhatsApp Business" */
  @IsString()
  @Length(1, 200)
  name: string;
}
