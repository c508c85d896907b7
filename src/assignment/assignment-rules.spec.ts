import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { chooseAgent, type Candidate } from './assignment-rules.js';

const id = (n: number) => new Types.ObjectId(n.toString(16).padStart(24, '0'));
const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute));
const candidate = (n: number, openConversations: number, lastAssignedAt: Date | null): Candidate => ({
  agentId: id(n),
  openConversations,
  lastAssignedAt,
});
const chosen = (...args: Parameters<typeof chooseAgent>) => chooseAgent(...args)?.agentId.toHexString() ?? null;

describe('chooseAgent', () => {
  it('round robin: never assigned first, then the least recently assigned, whatever the load', () => {
    const agents = [candidate(1, 0, at(5)), candidate(2, 3, at(1)), candidate(3, 1, at(3))];
    expect(chosen(agents, 'round_robin', 10)).toBe(id(2).toHexString());
    expect(chosen([...agents, candidate(4, 4, null)], 'round_robin', 10)).toBe(id(4).toHexString());
  });

  it('least busy: the fewest open conversations, ties by least recently assigned, then by id', () => {
    expect(chosen([candidate(1, 2, null), candidate(2, 1, at(9)), candidate(3, 3, null)], 'least_busy', 10)).toBe(
      id(2).toHexString(),
    );
    expect(chosen([candidate(1, 1, at(9)), candidate(2, 1, at(2)), candidate(3, 1, at(4))], 'least_busy', 10)).toBe(
      id(2).toHexString(),
    );
    expect(chosen([candidate(7, 0, null), candidate(5, 0, null)], 'least_busy', 10)).toBe(id(5).toHexString());
  });

  it('skips agents at capacity, and answers null when all are', () => {
    const agents = [candidate(1, 2, null), candidate(2, 1, at(8))];
    expect(chosen(agents, 'round_robin', 2)).toBe(id(2).toHexString());
    expect(chosen(agents, 'least_busy', 2)).toBe(id(2).toHexString());
    expect(chosen(agents, 'round_robin', 1)).toBeNull();
    expect(chosen([], 'least_busy', 5)).toBeNull();
  });

  it('rotates evenly when each choice is stamped', () => {
    const agents = [candidate(1, 0, null), candidate(2, 0, null), candidate(3, 0, null)];
    const order: string[] = [];
    for (let minute = 0; minute < 6; minute += 1) {
      const next = chooseAgent(agents, 'round_robin', 10)!;
      next.lastAssignedAt = at(minute);
      next.openConversations += 1;
      order.push(next.agentId.toHexString());
    }
    expect(order).toEqual([1, 2, 3, 1, 2, 3].map((n) => id(n).toHexString()));
  });
});
