import { IsBoolean, IsIn, IsString, Length } from 'class-validator';
import { ROLES, type Role } from '../../auth/auth-principal.js';
import { AGENT_STATUSES, type AgentStatus } from '../agent.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export class UpdateAgentDto {
  /** Admins only */
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  name?: string;

  /** Admins only */
  @IsOmittable()
  @IsIn(ROLES)
  role?: Role;

  /** Admins, or the agent itself */
  @IsOmittable()
  @IsIn(AGENT_STATUSES)
  status?: AgentStatus;

  /** Admins only; lets the agent log in */
  @IsOmittable()
  @IsString()
  @Length(8, 200)
  password?: string;

  /** Admins only: true reactivates a deactivated agent, false deactivates like DELETE */
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;
}
