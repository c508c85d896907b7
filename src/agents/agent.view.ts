import { ApiProperty } from '@nestjs/swagger';
import { ROLES, type Role } from '../auth/auth-principal.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { AGENT_STATUSES, type Agent, type AgentStatus } from './agent.schema.js';

/** An agent as the API shows it: never its password hash. */
export class AgentView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'Ada Lovelace' }) name: string;
  @ApiProperty({ example: 'ada@example.com' }) email: string;
  @ApiProperty({ enum: ROLES }) role: Role;
  @ApiProperty({ enum: AGENT_STATUSES }) status: AgentStatus;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(agent: Stored<Agent>): AgentView {
    return {
      id: agent._id.toHexString(),
      name: agent.name,
      email: agent.email,
      role: agent.role,
      status: agent.status,
      isActive: agent.isActive,
      createdAt: agent.createdAt.toISOString(),
      updatedAt: agent.updatedAt.toISOString(),
    };
  }
}
