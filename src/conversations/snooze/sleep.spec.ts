import { describe, expect, it } from '@jest/globals';
import { fallAsleep, MAX_KEPT_SLEEPS, sleptMs, wakeUp, type SleepRecord } from './sleep.js';

const at = (minute: number) => new Date(Date.UTC(2026, 4, 1, 9, minute));
const MINUTE = 60_000;

/** Sleeps of the given [from, to] minutes, each completed in turn. */
function sleeps(...intervals: [number, number][]): SleepRecord | null {
  let record: SleepRecord | null = null;
  for (const [from, to] of intervals) record = wakeUp(fallAsleep(record, at(from)), at(to));
  return record;
}

describe('sleep accounting', () => {
  it('counts nothing for a conversation never snoozed, or an empty or reversed window', () => {
    expect(sleptMs(null, at(0), at(60))).toBe(0);
    expect(sleptMs(sleeps([10, 20]), at(30), at(30))).toBe(0);
    expect(sleptMs(sleeps([10, 20]), at(40), at(0))).toBe(0);
  });

  it('counts a completed sleep where it overlaps the window', () => {
    const record = sleeps([10, 20]);
    expect(sleptMs(record, at(0), at(60))).toBe(10 * MINUTE);
    expect(sleptMs(record, at(15), at(60))).toBe(5 * MINUTE);
    expect(sleptMs(record, at(0), at(12))).toBe(2 * MINUTE);
    expect(sleptMs(record, at(12), at(18))).toBe(6 * MINUTE);
    expect(sleptMs(record, at(20), at(60))).toBe(0);
  });

  it('adds up several sleeps', () => {
    expect(sleptMs(sleeps([10, 20], [30, 45], [50, 51]), at(0), at(60))).toBe(26 * MINUTE);
    expect(sleptMs(sleeps([10, 20], [30, 45], [50, 51]), at(15), at(35))).toBe(10 * MINUTE);
  });

  it('counts the ongoing sleep up to the end of the window', () => {
    const record = fallAsleep(sleeps([10, 20]), at(30));
    expect(record.since).toEqual(at(30));
    expect(sleptMs(record, at(0), at(40))).toBe(20 * MINUTE);
    expect(sleptMs(record, at(35), at(59))).toBe(24 * MINUTE);
    expect(sleptMs(record, at(0), at(25))).toBe(10 * MINUTE);
  });

  it('keeps one sleep when snoozed again while asleep (the wake-up moved)', () => {
    const first = fallAsleep(null, at(10));
    const moved = fallAsleep(first, at(15));
    expect(moved).toBe(first);
    expect(sleptMs(wakeUp(moved, at(30)), at(0), at(60))).toBe(20 * MINUTE);
  });

  it('leaves an awake record as it is when woken again', () => {
    const record = sleeps([10, 20]);
    expect(wakeUp(record, at(40))).toEqual(record);
    expect(wakeUp(null, at(40))).toBeNull();
  });

  it('never ends a sleep before it began (a clock behind the snooze)', () => {
    const record = wakeUp(fallAsleep(null, at(30)), at(25));
    expect(record?.past).toEqual([{ from: at(30), to: at(30) }]);
    expect(sleptMs(record, at(0), at(60))).toBe(0);
  });

  it(`keeps ${MAX_KEPT_SLEEPS} sleeps one by one and folds older ones into a sum, exact over a window covering them`, () => {
    const intervals: [number, number][] = Array.from({ length: MAX_KEPT_SLEEPS + 5 }, (_, index) => [index * 10, index * 10 + 3]);
    const record = sleeps(...intervals)!;
    expect(record.past).toHaveLength(MAX_KEPT_SLEEPS);
    expect(record.folded).toEqual({ from: at(0), to: at(43), ms: 5 * 3 * MINUTE });
    expect(sleptMs(record, at(0), at(10_000))).toBe((MAX_KEPT_SLEEPS + 5) * 3 * MINUTE);
    // From the first kept sleep on: the folded ones are outside the window.
    expect(sleptMs(record, at(50), at(10_000))).toBe(MAX_KEPT_SLEEPS * 3 * MINUTE);
  });

  it('counts the folded sum at most up to the overlap when the window cuts through it (an upper bound)', () => {
    const intervals: [number, number][] = Array.from({ length: MAX_KEPT_SLEEPS + 5 }, (_, index) => [index * 10, index * 10 + 3]);
    const record = sleeps(...intervals)!;
    // Really asleep 6 minutes in [21, 41] ([21, 23], [30, 33], [40, 41]): the folded 15 minutes, within a 20-minute overlap.
    expect(sleptMs(record, at(21), at(41))).toBe(15 * MINUTE);
    expect(sleptMs(record, at(42), at(45))).toBe(1 * MINUTE);
  });
});
