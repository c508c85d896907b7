import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from '@jest/globals';
import { assertAssignable, assertTransition, canTransition } from './conversation-transitions.js';
import { CONVERSATION_STATUSES, type ConversationStatus } from './conversation.schema.js';

/** The contract's table, written out pair by pair so that a change to the rules has to change this too. */
const EXPECTED: Record<`${ConversationStatus}->${ConversationStatus}`, boolean> = {
  'bot->bot': false,
  'bot->queued': true,
  'bot->human': true,
  'bot->closed': true,
  'queued->bot': false,
  'queued->queued': false,
  'queued->human': true,
  'queued->closed': true,
  'human->bot': false,
  'human->queued': true,
  'human->human': false,
  'human->closed': true,
  'closed->bot': false,
  'closed->queued': false,
  'closed->human': false,
  'closed->closed': false,
};

const ALLOWED_LIST: Record<ConversationStatus, string> = {
  bot: 'queued, human, closed',
  queued: 'human, closed',
  human: 'queued, closed',
  closed: 'none (closed conversations are never reopened)',
};

const pairs = CONVERSATION_STATUSES.flatMap((from) => CONVERSATION_STATUSES.map((to) => [from, to] as const));

describe('conversation transitions', () => {
  it('covers every pair of statuses', () => {
    expect(pairs).toHaveLength(Object.keys(EXPECTED).length);
  });

  it.each(pairs)('%s → %s', (from, to) => {
    const allowed = EXPECTED[`${from}->${to}`];
    expect(canTransition(from, to)).toBe(allowed);
    if (allowed) {
      expect(() => assertTransition(from, to)).not.toThrow();
      return;
    }
    let thrown: unknown;
    try {
      assertTransition(from, to);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(BadRequestException);
    expect((thrown as BadRequestException).message).toBe(
      `Cannot move a conversation from ${from} to ${to}; allowed from ${from}: ${ALLOWED_LIST[from]}`,
    );
  });

  it.each([
    ['bot', true],
    ['queued', true],
    ['human', true],
    ['closed', false],
  ] as const)('assigning a %s conversation allowed: %s', (from, allowed) => {
    if (allowed) expect(() => assertAssignable(from)).not.toThrow();
    else expect(() => assertAssignable(from)).toThrow('Cannot move a conversation from closed to human');
  });
});
