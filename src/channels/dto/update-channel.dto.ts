import { IsString, Length } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { ChannelOptionsDto } from './create-channel.dto.js';

/** `PATCH /v1/channels/:id`: any of name, address, replyWindowHours, isActive; `key` and `type` are fixed. */
export class UpdateChannelDto extends ChannelOptionsDto {
  /** @example "WhatsApp Business" */
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  name?: string;
}
