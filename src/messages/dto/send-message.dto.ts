import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsMongoId, IsObject, IsString, Length, ValidateNested } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { SendTemplateDto } from '../../message-templates/dto/send-template.dto.js';

export const MAX_MENTIONS = 20;

/** What an outbound message says: free-form text, or an approved template by name (exactly one). */
export class MessageContentDto {
  /**
   * Free-form text. On a channel with a reply window, only while the window is open (409 `reply-window-closed`
   * otherwise); with `private: true` on a conversation's messages, a private note instead
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

/**
 * What to send into a conversation: exactly one mode field (send-modes.ts), with that mode's options. Modes: `text`
 * (optionally a private note: `private`, `mentions`), `cannedResponseId`, `template`.
 */
export class SendMessageDto extends MessageContentDto {
  /** With `text`: true keeps it as a private note for your team, never sent to the contact (default false) */
  @IsOmittable()
  @IsBoolean()
  private?: boolean;

  /**
   * With `private: true`: agents to notify (active agents of your company), in `conversation.note_added`
   * @example ["6650f0c2a1b2c3d4e5f60701"]
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_MENTIONS)
  @ArrayUnique({ message: 'mentions must not repeat an agent' })
  @IsMongoId({ each: true })
  mentions?: string[];

  /**
   * Mode `cannedResponseId`: a canned response of your company, rendered for this conversation and sent as text
   * @example 6650f0c2a1b2c3d4e5f60730
   */
  @IsOmittable()
  @IsMongoId()
  cannedResponseId?: string;
}
