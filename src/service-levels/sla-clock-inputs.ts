import type { BusinessCalendar, Interval } from '../business-hours/business-calendar.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { CountedTime } from './counted-time.js';
import type { SlaTargets } from './sla-state.js';

/**
 * When the conversation sleeps, which stops its clocks: the one place the snooze's pause enters the SLA. Its completed
 * sleeps (snooze/sleep.ts), and the one under way up to its wake-up (`snoozedUntil`), so that a deadline shown while
 * it sleeps is the one it will have if it wakes then; waking earlier moves it earlier. Sleeps folded into one sum
 * (beyond the last MAX_KEPT_SLEEPS) count as one sleep of that length ending where they ended.
 */
export function sleepIntervals(conversation: Stored<Conversation>): Interval[] {
  const record = conversation.sleep;
  if (!record) return [];
  const sleeps: Interval[] = record.past.map(({ from, to }) => [from.getTime(), to.getTime()]);
  if (record.folded) sleeps.unshift([record.folded.to.getTime() - record.folded.ms, record.folded.to.getTime()]);
  if (record.since) sleeps.push([record.since.getTime(), Math.max(record.since.getTime(), conversation.snoozedUntil?.getTime() ?? record.since.getTime())]);
  return sleeps.sort((a, b) => a[0] - b[0]);
}

/** The time a conversation's SLA clocks count: open hours only when the targets say so (and business hours are on), less its sleeps. */
export function countedTimeOf(conversation: Stored<Conversation>, targets: SlaTargets, calendar: BusinessCalendar): CountedTime {
  return { calendar: targets.businessHoursOnly && calendar.enabled ? calendar : null, sleeps: sleepIntervals(conversation) };
}
