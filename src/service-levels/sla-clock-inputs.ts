import type { BusinessCalendar, Interval } from '../business-hours/business-calendar.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { CountedTime } from './counted-time.js';
import type { SlaTargets } from './sla-state.js';

/**
 * When the conversation sleeps, which stops its clocks: the one place the snooze's pause enters the SLA. Snoozes are
 * another module's (contract section 15); without them a conversation never sleeps.
 */
export function sleepIntervals(_conversation: Stored<Conversation>): Interval[] {
  return [];
}

/** The time a conversation's SLA clocks count: open hours only when the targets say so (and business hours are on), less its sleeps. */
export function countedTimeOf(conversation: Stored<Conversation>, targets: SlaTargets, calendar: BusinessCalendar): CountedTime {
  return { calendar: targets.businessHoursOnly && calendar.enabled ? calendar : null, sleeps: sleepIntervals(conversation) };
}
