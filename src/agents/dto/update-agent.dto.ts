import { ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsOptional, IsString, Length, Matches, Max, Min } from 'class-validator';
import { IsCapacityByChannel, SKILL_PATTERN } from './agent-routing-fields.js';
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

  /** Admins only: conversations routing may give it at once (0..100); null: the settings' `maxConversationsPerAgent` */
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(100)
  capacity?: number | null;

  /** Admins only: per-channel limits, `{ <channel key>: 0..100 }` */
  @IsOmittable()
  @IsCapacityByChannel()
  capacityByChannel?: Record<string, number>;

  /** Admins only: at most 20 of `[a-z0-9_-]{1,50}` */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @Matches(SKILL_PATTERN, { each: true, message: 'each of skills must match [a-z0-9_-]{1,50}' })
  skills?: string[];
}
