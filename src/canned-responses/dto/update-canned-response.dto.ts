import { IsOmittable } from '../../common/dto-decorators.js';
import { IsCannedContent, IsCannedTitle, IsShortCode } from './canned-response-fields.js';

/** Only the fields sent change; none is nullable. */
export class UpdateCannedResponseDto {
  @IsOmittable()
  @IsShortCode(false)
  shortCode?: string;

  @IsOmittable()
  @IsCannedTitle(false)
  title?: string;

  @IsOmittable()
  @IsCannedContent(false)
  content?: string;
}
