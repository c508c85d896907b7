import { IsBoolean, IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { AGENT_STATUSES, type AgentStatus } from '../agent.schema.js';
import { QueryBoolean } from '../../common/dto-decorators.js';

export class ListAgentsQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(AGENT_STATUSES)
  status?: AgentStatus;

  /** "true" or "false"; deactivated agents stay listable */
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  isActive?: boolean;
}
