import type { Types } from 'mongoose';
import { loadByChannelOf } from '../agents/agent.schema.js';
import type { AssignableAgent } from '../agents/agents.repository.js';
import type { AssignmentStrategy } from '../settings/settings.schema.js';

/** An active, online agent as routing sees it during one pass: its limits and its load, kept up to date by the pass. */
export interface Candidate {
  agentId: Types.ObjectId;
  /** Open `human` conversations held (its `load.total`). */
  openConversations: number;
  lastAssignedAt: Date | null;
  capacity: number;
  capacityByChannel: Record<string, number>;
  /** Load per channel key. */
  loadByChannel: Record<string, number>;
  skills: ReadonlySet<string>;
}

/** What a conversation asks of the agent who takes it. */
export interface Need {
  channel: string;
  requiredSkills: readonly string[];
}

export function candidateOf(agent: AssignableAgent, defaultCapacity: number): Candidate {
  return {
    agentId: agent._id,
    openConversations: agent.loadTotal ?? 0,
    lastAssignedAt: agent.lastAssignedAt ?? null,
    capacity: agent.capacity ?? defaultCapacity,
    capacityByChannel: agent.capacityByChannel ?? {},
    loadByChannel: loadByChannelOf(agent),
    skills: new Set(agent.skills ?? []),
  };
}

/** The per-channel limit of the candidate on `channel`, null when none is set. */
export function channelCapacityOf(candidate: Candidate, channel: string): number | null {
  return candidate.capacityByChannel[channel] ?? null;
}

function channelLoadOf(candidate: Candidate, channel: string): number {
  return candidate.loadByChannel[channel] ?? 0;
}

/** Never assigned first, then the longest ago; the id settles exact ties so the order is stable. */
function byLeastRecentlyAssigned(a: Candidate, b: Candidate): number {
  const at = (candidate: Candidate) => candidate.lastAssignedAt?.getTime() ?? -Infinity;
  return at(a) - at(b) || a.agentId.toHexString().localeCompare(b.agentId.toHexString());
}

/**
 * The capacity rule: routing gives an agent a conversation only while it holds fewer open `human` conversations than
 * its capacity, and fewer on the conversation's channel than its limit there when it has one. (An explicit
 * assignment to a named agent is not limited by it.)
 */
function hasRoom(candidate: Candidate, need: Pick<Need, 'channel'>): boolean {
  const channelCapacity = channelCapacityOf(candidate, need.channel);
  return candidate.openConversations < candidate.capacity && (channelCapacity === null || channelLoadOf(candidate, need.channel) < channelCapacity);
}

/** Holds every skill the conversation requires. */
export function isSkilled(candidate: Candidate, need: Pick<Need, 'requiredSkills'>): boolean {
  return need.requiredSkills.every((skill) => candidate.skills.has(skill));
}

/**
 * The agent that gets the conversation, or null when no candidate has room and the skills.
 * `round_robin`: the one assigned least recently. `least_busy`: the fewest open conversations, ties by least
 * recently assigned.
 */
export function chooseAgent(candidates: readonly Candidate[], strategy: AssignmentStrategy, need: Need): Candidate | null {
  let best: Candidate | null = null;
  for (const candidate of candidates) {
    if (!hasRoom(candidate, need) || !isSkilled(candidate, need)) continue;
    if (best === null || compare(candidate, best, strategy) < 0) best = candidate;
  }
  return best;
}

function compare(a: Candidate, b: Candidate, strategy: AssignmentStrategy): number {
  if (strategy === 'least_busy') return a.openConversations - b.openConversations || byLeastRecentlyAssigned(a, b);
  return byLeastRecentlyAssigned(a, b);
}

/** Counts a conversation the pass gave the candidate, as the stored counters now say. */
export function countIn(candidate: Candidate, channel: string, at: Date): void {
  candidate.openConversations += 1;
  candidate.loadByChannel = { ...candidate.loadByChannel, [channel]: channelLoadOf(candidate, channel) + 1 };
  candidate.lastAssignedAt = at;
}

/** Takes back a conversation counted in the candidate whose assignment did not happen. */
export function countOut(candidate: Candidate, channel: string): void {
  candidate.openConversations -= 1;
  candidate.loadByChannel = { ...candidate.loadByChannel, [channel]: channelLoadOf(candidate, channel) - 1 };
}
