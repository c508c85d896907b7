import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Role } from '../auth/auth-principal.js';
import type { Agent, AgentStatus } from './agent.schema.js';

/** An agent as the API shows it: never its password hash. */
export class AgentView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "Ada Lovelace" */
  name: string;
  /** @example ada@example.com */
  email: string;
  role: Role;
  status: AgentStatus;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;

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
