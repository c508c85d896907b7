import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Role } from '../auth/auth-principal.js';
import { loadByChannelOf, type Agent, type AgentStatus } from './agent.schema.js';

export class AgentLoadView {
  total: number;
  byChannel: Record<string, number>;
}

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
  /** Conversations routing may give it at once; null: the settings' `maxConversationsPerAgent` */
  capacity: number | null;
  /** Per-channel limits by channel key */
  capacityByChannel: Record<string, number>;
  skills: string[];
  /** Read-only: the open `human` conversations assigned to it (snoozed ones included), in all and per channel */
  load: AgentLoadView;
  /** `GET /v1/agents/:id` only: the teams it is a member of */
  teamIds?: string[];
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
      capacity: agent.capacity ?? null,
      capacityByChannel: agent.capacityByChannel ?? {},
      skills: agent.skills ?? [],
      load: { total: agent.loadTotal ?? 0, byChannel: loadByChannelOf(agent) },
      createdAt: agent.createdAt.toISOString(),
      updatedAt: agent.updatedAt.toISOString(),
    };
  }
}
