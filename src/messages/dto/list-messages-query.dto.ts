import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsOptional } from 'class-validator';
import { QueryBoolean } from '../../common/dto-decorators.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsTimestamp, TIMESTAMP_FORMAT } from '../timestamp.js';

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
