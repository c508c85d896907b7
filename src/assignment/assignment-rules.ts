import type { Types } from 'mongoose';
import type { AssignmentStrategy } from '../settings/settings.schema.js';

/** An active, online agent and how many open `human` conversations it holds. */
export interface Candidate {
  agentId: Types.ObjectId;
  openConversations: number;
  lastAssignedAt: Date | null;
}

/** Never assigned first, then the longest ago; the id settles exact ties so the order is stable. */
function byLeastRecentlyAssigned(a: Candidate, b: Candidate): number {
  const at = (candidate: Candidate) => candidate.lastAssignedAt?.getTime() ?? -Infinity;
  return at(a) - at(b) || a.agentId.toHexString().localeCompare(b.agentId.toHexString());
}

/**
 * The capacity rule: an agent takes an automatic assignment only while it holds fewer open `human`
 * conversations than the company's `maxConversationsPerAgent`. (An explicit assignment to a named agent is
 * not limited by it.)
 */
export function hasRoom(candidate: Candidate, capacity: number): boolean {
  return candidate.openConversations < capacity;
}

/**
 * The agent that gets the next conversation, or null when no candidate has room (the capacity rule).
 * `round_robin`: the one assigned least recently. `least_busy`: the fewest open conversations,
 * ties by least recently assigned.
 */
export function chooseAgent(candidates: Candidate[], strategy: AssignmentStrategy, capacity: number): Candidate | null {
  const eligible = candidates.filter((candidate) => hasRoom(candidate, capacity));
  const order =
    strategy === 'least_busy'
      ? (a: Candidate, b: Candidate) => a.openConversations - b.openConversations || byLeastRecentlyAssigned(a, b)
      : byLeastRecentlyAssigned;
  return eligible.sort(order)[0] ?? null;
}
