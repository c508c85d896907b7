import { IsCannedContent, IsCannedTitle, IsShortCode } from './canned-response-fields.js';

export class CreateCannedResponseDto {
  @IsShortCode(true)
  shortCode: string;

  @IsCannedTitle(true)
  title: string;

  @IsCannedContent(true)
  content: string;
}
