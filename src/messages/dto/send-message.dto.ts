import { Type } from 'class-transformer';
import { IsObject, IsString, Length, ValidateNested } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { exactlyOneOf } from '../../common/exactly-one-of.js';
import { SendTemplateDto } from '../../message-templates/dto/send-template.dto.js';

/** What an outbound message says: free-form text, or an approved template by name. */
export class MessageContentDto {
  /**
   * Free-form text. On a channel with a reply window, only while the window is open (409 `reply-window-closed` otherwise)
   * @example "Your refund is on its way."
   */
  @IsOmittable()
  @IsString()
  @Length(1, 4096)
  text?: string;

  /** An approved template of the channel, by name: allowed also outside the reply window */
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => SendTemplateDto)
  template?: SendTemplateDto;
}

/** The ways to send a message into a conversation: a request gives exactly one of these fields. */
export const SEND_MESSAGE_MODES = ['text', 'template'] as const;
export type SendMessageMode = (typeof SEND_MESSAGE_MODES)[number];

/** `POST /v1/conversations/:id/messages`: exactly one of `text` or `template`. */
export class SendMessageDto extends MessageContentDto {}

/** Which mode the body chose; 400 naming the modes when it gives none or several. */
export function sendMessageModeOf(dto: SendMessageDto): SendMessageMode {
  return exactlyOneOf(dto, SEND_MESSAGE_MODES);
}
