import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { QueryBoolean } from '../../common/dto-decorators.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsTimestamp } from '../timestamp.js';

const TIMESTAMP_FORMAT = 'ISO-8601 with a zone (`2024-05-01T10:00:00Z`), a date (`2024-05-01`, midnight UTC) or epoch milliseconds';

export class ListMessagesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: `Only messages strictly older than this; ${TIMESTAMP_FORMAT}` })
  @IsOptional()
  @IsTimestamp()
  before?: string;

  @ApiPropertyOptional({ description: `Only messages strictly newer than this, oldest first; ${TIMESTAMP_FORMAT}` })
  @IsOptional()
  @IsTimestamp()
  after?: string;

  /** "false" leaves private notes out; "true" lists only them; absent: every message */
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  private?: boolean;
}
