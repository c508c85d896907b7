import { describe, expect, it } from '@jest/globals';
import { isDelivered, movesForward, REPORTED_STATUSES, type ReportedStatus } from './delivery-status.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './message.schema.js';

/** Every (current, reported) pair and whether it moves the message: the whole table, so no case is left implicit. */
const FORWARD: Record<DeliveryStatus, ReportedStatus[]> = {
  pending: ['sent', 'delivered', 'read', 'failed'],
  sent: ['delivered', 'read', 'failed'],
  delivered: ['read'],
  read: [],
  failed: [],
};

describe('movesForward', () => {
  const pairs = DELIVERY_STATUSES.flatMap((from) => REPORTED_STATUSES.map((to) => [from, to, FORWARD[from].includes(to)] as const));

  it.each(pairs)('%s → %s moves forward: %s', (from, to, expected) => {
    expect(movesForward(from, to)).toBe(expected);
  });

  it('has 8 forward moves among the 20 pairs', () => {
    expect(pairs).toHaveLength(20);
    expect(pairs.filter(([, , forward]) => forward)).toHaveLength(8);
  });
});

describe('isDelivered', () => {
  it.each([
    ['pending', false],
    ['sent', false],
    ['delivered', true],
    ['read', true],
    ['failed', false],
  ] as const)('%s: %s', (status, expected) => {
    expect(isDelivered(status)).toBe(expected);
  });
});
