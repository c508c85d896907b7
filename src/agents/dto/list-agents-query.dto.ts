import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { AGENT_STATUSES, type AgentStatus } from '../agent.schema.js';
import { QueryBoolean } from '../../common/dto-decorators.js';

export class ListAgentsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: AGENT_STATUSES })
  @IsOptional()
  @IsIn(AGENT_STATUSES)
  status?: AgentStatus;

  @ApiPropertyOptional({ type: Boolean, description: '"true" or "false"; deactivated agents stay listable' })
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  isActive?: boolean;
}
