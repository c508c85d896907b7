import { DAY_MS, firstInstantAt, isoWeekdayIndex, localDayOf, parseCalendarDate } from '../common/calendar-dates.js';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** One opening of a weekday: "HH:MM" local times, `close` after `open`, "24:00" for the end of the day. */
export interface OpeningWindow {
  day: Weekday;
  open: string;
  close: string;
}

/** What the settings say of business hours (contract section 16). */
export interface BusinessHoursRules {
  enabled: boolean;
  schedule: readonly OpeningWindow[];
  /** Local dates (YYYY-MM-DD) closed all day. */
  holidays: readonly string[];
}

/** An instant range [start, end), in epoch milliseconds. */
export type Interval = readonly [start: number, end: number];

/** How far ahead an opening is looked for before the calendar is taken to never open again (holidays cover one year or two). */
const HORIZON_DAYS = 800;
const MINUTE_MS = 60_000;

/** Minutes since local midnight of "HH:MM" (24:00 is 1440). */
export function minutesOf(time: string): number {
  const [hours, minutes] = time.split(':').map(Number);
  return hours * 60 + minutes;
}

/**
 * A company's business hours as arithmetic on instants, in its time zone (pure; no clock, no I/O). Each weekday has
 * its windows (several: split shifts) and holidays are closed all day. Local times become instants through the
 * zone's rules, so a window keeps its wall-clock hours across daylight-saving changes: on the day of a change it is
 * an hour shorter or longer, a time the change skips opens or closes at the change, and a time it repeats at its
 * first occurrence. Windows never cross midnight (a night shift is one window ending at 24:00 and one starting at
 * 00:00 the next day): open time runs on across midnight as one stretch.
 *
 * Disabled business hours are always open: nothing is out of hours, and every second counts as an open one.
 */
export class BusinessCalendar {
  /** Windows per ISO weekday index (0 = Monday), in minutes, sorted and with touching windows joined. */
  private readonly windows: [number, number][][];
  private readonly holidays: ReadonlySet<number>;

  constructor(
    readonly timeZone: string,
    private readonly rules: BusinessHoursRules,
  ) {
    this.windows = WEEKDAYS.map((day) => joined(rules.schedule.filter((window) => window.day === day).map((window) => [minutesOf(window.open), minutesOf(window.close)])));
    this.holidays = new Set(rules.holidays.map(parseCalendarDate).filter((day): day is number => typeof day === 'number'));
  }

  get enabled(): boolean {
    return this.rules.enabled;
  }

  isOpen(at: Date): boolean {
    if (!this.enabled) return true;
    const first = this.openIntervals(at).next();
    return !first.done && first.value[0] <= at.getTime();
  }

  /** The next instant after `at` at which it opens or closes; null when disabled, or when it never opens again. */
  nextChange(at: Date): Date | null {
    if (!this.enabled) return null;
    const first = this.openIntervals(at).next();
    if (first.done) return null;
    const [start, end] = first.value;
    const next = start > at.getTime() ? start : end;
    return Number.isFinite(next) ? new Date(next) : null;
  }

  /**
   * The open stretches from `from` on, ascending, the first cut at `from`, touching ones joined (a window to 24:00
   * and one from 00:00 the next day are one stretch), up to HORIZON_DAYS ahead; a stretch still open there is
   * endless. Disabled: one endless stretch.
   */
  *openIntervals(from: Date): Generator<Interval> {
    const origin = from.getTime();
    if (!this.enabled) {
      yield [origin, Number.POSITIVE_INFINITY];
      return;
    }
    let pending: [number, number] | null = null;
    const firstDay = localDayOf(from, this.timeZone);
    for (let day = firstDay; day < firstDay + HORIZON_DAYS; day += 1) {
      if (this.holidays.has(day)) continue;
      for (const [open, close] of this.windows[isoWeekdayIndex(day)]) {
        const start = Math.max(origin, this.instantOf(day, open));
        const end = this.instantOf(day, close);
        if (end <= start) continue;
        if (pending && pending[1] >= start) {
          pending[1] = Math.max(pending[1], end);
          continue;
        }
        if (pending) yield pending;
        pending = [start, end];
      }
    }
    // Still open at the horizon: as far as can be told, it never closes.
    if (pending && pending[1] >= this.instantOf(firstDay + HORIZON_DAYS, 0)) pending[1] = Number.POSITIVE_INFINITY;
    if (pending) yield pending;
  }

  private instantOf(day: number, minutes: number): number {
    return firstInstantAt(day * DAY_MS + minutes * MINUTE_MS, this.timeZone);
  }
}

/** Sorted, with windows that touch or overlap joined. */
function joined(windows: [number, number][]): [number, number][] {
  const sorted = [...windows].sort((a, b) => a[0] - b[0]);
  const result: [number, number][] = [];
  for (const [open, close] of sorted) {
    const last = result.at(-1);
    if (last && open <= last[1]) last[1] = Math.max(last[1], close);
    else result.push([open, close]);
  }
  return result;
}
