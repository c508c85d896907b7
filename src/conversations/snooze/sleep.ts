/**
 * Sleep accounting: when a conversation was snoozed, so that service levels (contract section 16) can stop their
 * clocks while it slept. Pure functions over the record a conversation keeps (`Conversation.sleep`), bounded in size
 * whatever the number of snoozes.
 */

/** What woke a snoozed conversation (`conversation.unsnoozed`); a close clears a snooze without waking it. */
export const UNSNOOZE_REASONS = ['timer', 'contact_message', 'agent'] as const;
export type UnsnoozeReason = (typeof UNSNOOZE_REASONS)[number];

/** One completed sleep, from the snooze to the wake-up (or the close). */
export interface SleepInterval {
  from: Date;
  to: Date;
}

/** The completed sleeps older than those kept one by one, summed: `ms` asleep within [from, to]. */
export interface FoldedSleep {
  from: Date;
  to: Date;
  ms: number;
}

export interface SleepRecord {
  /** When the ongoing sleep began; null while awake. Snoozing again while asleep continues the same sleep. */
  since: Date | null;
  /** Completed sleeps, oldest first, at most MAX_KEPT_SLEEPS. */
  past: SleepInterval[];
  /** The completed sleeps before `past`; null until more than MAX_KEPT_SLEEPS were recorded. */
  folded: FoldedSleep | null;
}

/** Sleeps kept one by one; older ones are folded into one sum, so the record stays small. */
export const MAX_KEPT_SLEEPS = 50;

const EMPTY: SleepRecord = { since: null, past: [], folded: null };

/** The record once asleep from `at` (unchanged when already asleep: a snooze moved is the same sleep). */
export function fallAsleep(record: SleepRecord | null | undefined, at: Date): SleepRecord {
  const current = record ?? EMPTY;
  return current.since ? current : { ...current, since: at };
}

/** The record once awake at `at`: the ongoing sleep becomes a completed one (never ending before it began). */
export function wakeUp(record: SleepRecord | null | undefined, at: Date): SleepRecord | null {
  if (!record?.since) return record ?? null;
  const to = at.getTime() < record.since.getTime() ? record.since : at;
  const past = [...record.past, { from: record.since, to }];
  let folded = record.folded;
  while (past.length > MAX_KEPT_SLEEPS) {
    const oldest = past.shift()!;
    const ms = oldest.to.getTime() - oldest.from.getTime();
    folded = folded ? { from: folded.from, to: oldest.to, ms: folded.ms + ms } : { from: oldest.from, to: oldest.to, ms };
  }
  return { since: null, past, folded };
}

function overlapMs(from: number, to: number, start: number, end: number): number {
  return Math.max(0, Math.min(to, end) - Math.max(from, start));
}

/**
 * How long the conversation was asleep between `from` and `to` (milliseconds): completed sleeps and the ongoing
 * one (asleep until now, so up to `to`). Exact, except where [from, to] cuts through the folded sleeps (more than
 * MAX_KEPT_SLEEPS sleeps ago): their sum is then counted up to the overlap, an upper bound.
 */
export function sleptMs(record: SleepRecord | null | undefined, from: Date, to: Date): number {
  const start = from.getTime();
  const end = to.getTime();
  if (!record || end <= start) return 0;
  let total = 0;
  const { folded } = record;
  if (folded) {
    const foldedFrom = folded.from.getTime();
    const foldedTo = folded.to.getTime();
    total += start <= foldedFrom && end >= foldedTo ? folded.ms : Math.min(folded.ms, overlapMs(start, end, foldedFrom, foldedTo));
  }
  for (const sleep of record.past) total += overlapMs(start, end, sleep.from.getTime(), sleep.to.getTime());
  if (record.since) total += overlapMs(start, end, record.since.getTime(), Number.POSITIVE_INFINITY);
  return total;
}
