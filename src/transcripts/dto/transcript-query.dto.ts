import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { QueryBoolean } from '../../common/dto-decorators.js';

export const TRANSCRIPT_FORMATS = ['text', 'json'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

export class TranscriptQueryDto {
  /** `text`: text/plain, one line per message; `json`: `{ conversation, contact, messages }` */
  @ApiPropertyOptional({ enum: TRANSCRIPT_FORMATS, default: 'text' })
  @IsOptional()
  @IsIn(TRANSCRIPT_FORMATS)
  format: TranscriptFormat = 'text';

  /** "true" includes private notes (marked `[private note]` in text) */
  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  includePrivate: boolean = false;
}
