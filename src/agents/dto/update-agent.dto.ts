import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsString, Length } from 'class-validator';
import { ROLES, type Role } from '../../auth/auth-principal.js';
import { AGENT_STATUSES, type AgentStatus } from '../agent.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export class UpdateAgentDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: 200, description: 'Admins only' })
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  name?: string;

  @ApiPropertyOptional({ enum: ROLES, description: 'Admins only' })
  @IsOmittable()
  @IsIn(ROLES)
  role?: Role;

  @ApiPropertyOptional({ enum: AGENT_STATUSES, description: 'Admins, or the agent itself' })
  @IsOmittable()
  @IsIn(AGENT_STATUSES)
  status?: AgentStatus;

  @ApiPropertyOptional({ minLength: 8, maxLength: 200, description: 'Admins only; lets the agent log in' })
  @IsOmittable()
  @IsString()
  @Length(8, 200)
  password?: string;

  @ApiPropertyOptional({
    description: 'Admins only: true reactivates a deactivated agent, false deactivates like DELETE',
  })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;
}
