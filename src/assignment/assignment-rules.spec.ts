import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { chooseAgent, countIn, type Candidate, type Need } from './assignment-rules.js';

const id = (n: number) => new Types.ObjectId(n.toString(16).padStart(24, '0'));
const at = (minute: number) => new Date(Date.UTC(2025, 0, 1, 0, minute));
const candidate = (n: number, openConversations: number, lastAssignedAt: Date | null, extra: Partial<Candidate> = {}): Candidate => ({
  agentId: id(n),
  openConversations,
  lastAssignedAt,
  capacity: 10,
  capacityByChannel: {},
  loadByChannel: {},
  skills: new Set(),
  ...extra,
});
const web: Need = { channel: 'web', requiredSkills: [] };
const chosen = (candidates: Candidate[], strategy: 'round_robin' | 'least_busy', need: Need = web) =>
  chooseAgent(candidates, strategy, need)?.agentId.toHexString() ?? null;

describe('chooseAgent', () => {
  it('round robin: never assigned first, then the least recently assigned, whatever the load', () => {
    const agents = [candidate(1, 0, at(5)), candidate(2, 3, at(1)), candidate(3, 1, at(3))];
    expect(chosen(agents, 'round_robin')).toBe(id(2).toHexString());
    expect(chosen([...agents, candidate(4, 4, null)], 'round_robin')).toBe(id(4).toHexString());
  });

  it('least busy: the fewest open conversations, ties by least recently assigned, then by id', () => {
    expect(chosen([candidate(1, 2, null), candidate(2, 1, at(9)), candidate(3, 3, null)], 'least_busy')).toBe(id(2).toHexString());
    expect(chosen([candidate(1, 1, at(9)), candidate(2, 1, at(2)), candidate(3, 1, at(4))], 'least_busy')).toBe(id(2).toHexString());
    expect(chosen([candidate(7, 0, null), candidate(5, 0, null)], 'least_busy')).toBe(id(5).toHexString());
  });

  it('skips agents at their own capacity, and answers null when all are', () => {
    const agents = [candidate(1, 2, null, { capacity: 2 }), candidate(2, 1, at(8), { capacity: 2 })];
    expect(chosen(agents, 'round_robin')).toBe(id(2).toHexString());
    expect(chosen(agents, 'least_busy')).toBe(id(2).toHexString());
    expect(chosen([candidate(1, 1, null, { capacity: 1 })], 'round_robin')).toBeNull();
    expect(chosen([], 'least_busy')).toBeNull();
  });

  it('respects per-channel limits and required skills', () => {
    const whatsapp: Need = { channel: 'whatsapp', requiredSkills: [] };
    const full = candidate(1, 1, null, { capacityByChannel: { whatsapp: 1 }, loadByChannel: { whatsapp: 1 } });
    const other = candidate(2, 3, at(1));
    expect(chosen([full, other], 'least_busy', whatsapp)).toBe(id(2).toHexString());
    expect(chosen([full, other], 'least_busy', web)).toBe(id(1).toHexString());
    const french: Need = { channel: 'web', requiredSkills: ['french', 'billing'] };
    const skilled = candidate(3, 5, at(9), { skills: new Set(['french', 'billing', 'vip']) });
    expect(chosen([candidate(4, 0, null, { skills: new Set(['french']) }), skilled], 'least_busy', french)).toBe(id(3).toHexString());
  });

  it('rotates evenly when each choice is counted in', () => {
    const agents = [candidate(1, 0, null), candidate(2, 0, null), candidate(3, 0, null)];
    const order: string[] = [];
    for (let minute = 0; minute < 6; minute += 1) {
      const next = chooseAgent(agents, 'round_robin', web)!;
      countIn(next, 'web', at(minute));
      order.push(next.agentId.toHexString());
    }
    expect(order).toEqual([1, 2, 3, 1, 2, 3].map((n) => id(n).toHexString()));
  });
});
