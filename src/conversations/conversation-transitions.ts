import { BadRequestException } from '@nestjs/common';
import type { ConversationStatus } from './conversation.schema.js';

/**
 * The conversation life cycle (contract section 4), the only place it is written down:
 * bot → queued (hand-off), bot|queued → human (assign), human → queued (unassign),
 * bot|queued|human → closed. Closed is final: the contact's next message opens a new conversation.
 */
export const ALLOWED_TRANSITIONS: Readonly<Record<ConversationStatus, readonly ConversationStatus[]>> = {
  bot: ['queued', 'human', 'closed'],
  queued: ['human', 'closed'],
  human: ['queued', 'closed'],
  closed: [],
};

export function canTransition(from: ConversationStatus, to: ConversationStatus): boolean {
  return ALLOWED_TRANSITIONS[from].includes(to);
}

/** Throws a 400 naming what is allowed from `from` unless `from → to` is a transition of the life cycle. */
export function assertTransition(from: ConversationStatus, to: ConversationStatus): void {
  if (canTransition(from, to)) return;
  const allowed = ALLOWED_TRANSITIONS[from];
  const list = allowed.length > 0 ? allowed.join(', ') : 'none (closed conversations are never reopened)';
  throw new BadRequestException(`Cannot move a conversation from ${from} to ${to}; allowed from ${from}: ${list}`);
}

/**
 * Assigning puts a conversation in `human`. A conversation already in `human` may be handed to
 * another agent (a reassignment, not a status change); from anywhere else it is the transition.
 */
export function assertAssignable(from: ConversationStatus): void {
  if (from !== 'human') assertTransition(from, 'human');
}
