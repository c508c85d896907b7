import { IsString, Length } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';

export class CloseConversationDto {
  /** @example "Resolved: refund issued" */
  @IsOmittable()
  @IsString()
  @Length(1, 500)
  reason?: string;
}
