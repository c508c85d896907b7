import type { BusinessCalendar, Interval } from '../business-hours/business-calendar.js';

/**
 * The time an SLA clock counts: every second, or only open business hours (a policy's `businessHoursOnly`), less the
 * time the conversation sleeps (snoozed: its clocks stop). Pure arithmetic over intervals of epoch milliseconds.
 */
export interface CountedTime {
  /** Open hours only; null: every second counts. */
  calendar: BusinessCalendar | null;
  /** When the conversation sleeps (past sleeps, and the current one up to its wake-up), ascending, not overlapping. */
  sleeps: readonly Interval[];
}

/** The stretches of counted time from `from` on, ascending. */
export function* countedIntervals(from: Date, counted: CountedTime): Generator<Interval> {
  const open: Iterable<Interval> = counted.calendar ? counted.calendar.openIntervals(from) : [[from.getTime(), Number.POSITIVE_INFINITY]];
  const sleeps = counted.sleeps.filter(([, end]) => end > from.getTime());
  let next = 0;
  for (const [openStart, openEnd] of open) {
    let start = openStart;
    while (next < sleeps.length && sleeps[next][1] <= start) next += 1;
    for (let index = next; index < sleeps.length && start < openEnd; index += 1) {
      const [sleepStart, sleepEnd] = sleeps[index];
      if (sleepStart >= openEnd) break;
      if (sleepStart > start) yield [start, sleepStart];
      start = Math.max(start, sleepEnd);
    }
    if (start < openEnd) yield [start, openEnd];
  }
}

/** The instant at which `seconds` of counted time have passed since `from`; null when that never happens. */
export function deadlineAfter(from: Date, seconds: number, counted: CountedTime): Date | null {
  let remaining = seconds * 1000;
  for (const [start, end] of countedIntervals(from, counted)) {
    if (end - start >= remaining) return new Date(start + remaining);
    remaining -= end - start;
  }
  return null;
}

/** Counted seconds in [from, to) (millisecond precision). */
export function countedSecondsBetween(from: Date, to: Date, counted: CountedTime): number {
  let total = 0;
  for (const [start, end] of countedIntervals(from, counted)) {
    if (start >= to.getTime()) break;
    total += Math.min(end, to.getTime()) - start;
  }
  return total / 1000;
}
