import { IsString, Length } from 'class-validator';

export class SendMessageDto {
  /** @example "Your refund is on its way." */
  @IsString()
  @Length(1, 4096)
  text: string;
}
