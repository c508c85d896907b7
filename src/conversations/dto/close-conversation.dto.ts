import { IsOptional, IsString, Length } from 'class-validator';

export class CloseConversationDto {
  /** @example "Resolved: refund issued" */
  @IsOptional()
  @IsString()
  @Length(1, 500)
  reason?: string;
}
