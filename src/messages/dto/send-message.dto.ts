import { ArrayMaxSize, ArrayUnique, IsArray, IsBoolean, IsMongoId, IsString, Length } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';

export const MAX_MENTIONS = 20;

/**
 * What to send: exactly one mode field (send-modes.ts), with that mode's options. Modes: `text` (optionally a
 * private note: `private`, `mentions`), `cannedResponseId`.
 */
export class SendMessageDto {
  /**
   * Mode `text`: the text, sent to the contact (or kept as a private note with `private: true`)
   * @example "Your refund is on its way."
   */
  @IsOmittable()
  @IsString()
  @Length(1, 4096)
  text?: string;

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
