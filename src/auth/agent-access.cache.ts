import { Injectable } from '@nestjs/common';
import { AGENT_WRITES, type Agent } from '../agents/agent.schema.js';
import { AgentsRepository } from '../agents/agents.repository.js';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';

/** What authentication needs of a token's agent: is it still active, and its role now. */
export type AgentAccess = Pick<Stored<Agent>, 'role' | 'isActive'>;

/** How long another process's change to an agent (deactivation, role) may take to apply here. */
export const AGENT_ACCESS_TTL_MS = 2_000;
const MAX_CACHED_AGENTS = 10_000;

/**
 * The agent of every bearer request, from memory instead of a database read per request. Any write to
 * the agents collection in this process empties it (AGENT_WRITES), so a deactivation or role change
 * made here applies from the next request on; one made by another process applies within
 * AGENT_ACCESS_TTL_MS.
 */
@Injectable()
export class AgentAccessCache {
  private readonly cache = new ReadThroughCache<AgentAccess | null>(AGENT_WRITES, {
    ttlMs: AGENT_ACCESS_TTL_MS,
    maxEntries: MAX_CACHED_AGENTS,
  });

  constructor(private readonly agents: AgentsRepository) {}

  /** Null for an agent that does not exist in that company. */
  find(companyId: string, agentId: string): Promise<AgentAccess | null> {
    return this.cache.get(`${companyId}/${agentId}`, () => this.agents.findById(companyId, agentId, { role: 1, isActive: 1 }));
  }
}
