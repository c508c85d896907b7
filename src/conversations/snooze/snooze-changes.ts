import { BadRequestException } from '@nestjs/common';
import { RequestValidationException } from '../../common/errors/request-validation.exception.js';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { stageEvent } from '../../events/pending-event.schema.js';
import type { PlannedChange } from '../conversation-changes.js';
import type { Conversation, ConversationStatus } from '../conversation.schema.js';
import { ConversationView } from '../conversation.view.js';
import { fallAsleep, wakeUp, type UnsnoozeReason } from './sleep.js';

/** The snooze rules (contract section 15): what may sleep, for how long, and what a snooze and a wake-up change. */

export const SNOOZABLE_STATUSES: readonly ConversationStatus[] = ['human', 'queued'];
export const MAX_SNOOZE_DAYS = 90;
const MAX_SNOOZE_MS = MAX_SNOOZE_DAYS * 86_400_000;

/** 400 naming `until` unless it is in the future and at most MAX_SNOOZE_DAYS ahead of `now`. */
export function assertSnoozeUntil(until: Date, now: Date): void {
  if (until.getTime() <= now.getTime()) {
    throw new RequestValidationException([{ field: 'until', message: 'until must be in the future' }]);
  }
  if (until.getTime() - now.getTime() > MAX_SNOOZE_MS) {
    throw new RequestValidationException([{ field: 'until', message: `until must be at most ${MAX_SNOOZE_DAYS} days from now` }]);
  }
}

export function assertSnoozable(status: ConversationStatus): void {
  if (SNOOZABLE_STATUSES.includes(status)) return;
  throw new BadRequestException(`Only ${SNOOZABLE_STATUSES.join(' or ')} conversations can be snoozed; this one is ${status}`);
}

/**
 * Snoozes until `until` from `at` (status unchanged), with `conversation.snoozed`. Snoozed already: the wake-up
 * moves and the sleep goes on; the same `until` again changes nothing.
 */
export function snoozePlan(conversation: Stored<Conversation>, until: Date, at: Date): PlannedChange | null {
  assertSnoozable(conversation.status);
  if (conversation.snoozedUntil?.getTime() === until.getTime()) return null;
  return {
    expected: {},
    set: { snoozedUntil: until, sleep: fallAsleep(conversation.sleep, at) },
    events: (after) => [stageEvent('conversation.snoozed', { conversation: ConversationView.from(after) }, { occurredAt: after.updatedAt })],
  };
}

/** What waking at `at` sets: no `snoozedUntil`, the sleep completed. Empty when awake. */
export function wakeFields(conversation: Stored<Conversation>, at: Date): Partial<Conversation> {
  if (!conversation.snoozedUntil && !conversation.sleep?.since) return {};
  return { snoozedUntil: null, sleep: wakeUp(conversation.sleep, at) };
}

/** Wakes a snoozed conversation at `at`, with `conversation.unsnoozed` and its reason; null when it is awake. */
export function wakePlan(conversation: Stored<Conversation>, reason: UnsnoozeReason, at: Date): PlannedChange | null {
  if (!conversation.snoozedUntil) return null;
  return {
    expected: {},
    set: wakeFields(conversation, at),
    events: (after) => [stageEvent('conversation.unsnoozed', { conversation: ConversationView.from(after), reason }, { occurredAt: after.updatedAt })],
  };
}
