import { IsEmail, IsIn, IsString, Length, MaxLength } from 'class-validator';
import { ROLES, type Role } from '../../auth/auth-principal.js';
import { AGENT_STATUSES, type AgentStatus } from '../agent.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export class CreateAgentDto {
  /** @example "Grace Hopper" */
  @IsString()
  @Length(1, 200)
  name: string;

  /**
   * Unique within the company
   * @example grace@acme.example
   */
  @IsEmail()
  @MaxLength(320)
  email: string;

  @IsOmittable()
  @IsIn(ROLES)
  role?: Role = 'agent';

  @IsOmittable()
  @IsIn(AGENT_STATUSES)
  status?: AgentStatus = 'offline';

  /** Lets the agent log in with its e-mail; an e-mail can log in to one company only */
  @IsOmittable()
  @IsString()
  @Length(8, 200)
  password?: string;
}
