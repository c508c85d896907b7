import { Injectable } from '@nestjs/common';
import { AGENT_WRITES, type Agent } from '../agents/agent.schema.js';
import { AgentsRepository } from '../agents/agents.repository.js';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';

/** What authentication needs of a token's agent: is it still active, its role now, and its token version. */
export type AgentAccess = Pick<Stored<Agent>, 'role' | 'isActive' | 'tokenVersion'>;

/**
 * The agent of every bearer request, from memory instead of a database read per request. Any write to
 * the agents collection in this process empties it (AGENT_WRITES), so a deactivation, role change or
 * new password made here applies from the next request on; one made by another process applies within
 * CROSS_PROCESS_STALENESS_MS.
 */
@Injectable()
export class AgentAccessCache {
  private readonly cache = new ReadThroughCache<AgentAccess | null>(AGENT_WRITES);

  constructor(private readonly agents: AgentsRepository) {}

  /** Null for an agent that does not exist in that company. */
  find(companyId: string, agentId: string): Promise<AgentAccess | null> {
    return this.cache.get(`${companyId}/${agentId}`, () => this.agents.findById(companyId, agentId, { role: 1, isActive: 1, tokenVersion: 1 }));
  }
}
