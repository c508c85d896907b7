import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
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
}
