/**
 * Calendar dates and their time-zone instants. A calendar date is a day number (days since 1970-01-01, proleptic
 * Gregorian), so that day arithmetic is plain integer arithmetic and never meets a time zone; zones appear only where
 * a local wall-clock reading becomes an instant or back, through Intl (the runtime's time-zone database). Analytics
 * (buckets of local days) and business hours (local opening times) both count in them.
 */

export const DAY_MS = 86_400_000;
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const mod = (a: number, n: number) => ((a % n) + n) % n;

export function dayNumber(year: number, month: number, day: number): number {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() / DAY_MS;
}

export function partsOf(day: number): { year: number; month: number; day: number } {
  const date = new Date(day * DAY_MS);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
}

/** 0 for Monday to 6 for Sunday (day 0, 1970-01-01, was a Thursday). */
export function isoWeekdayIndex(day: number): number {
  return mod(day + 3, 7);
}

export type CalendarDateProblem = 'format' | 'calendar';

/** The day number of a strict `YYYY-MM-DD`, or why it is not one: a bad format, or a date the calendar lacks (2025-02-30). */
export function parseCalendarDate(text: unknown): number | CalendarDateProblem {
  const match = typeof text === 'string' ? CALENDAR_DATE.exec(text) : null;
  if (!match) return 'format';
  const [year, month, day] = match.slice(1).map(Number);
  const parsed = dayNumber(year, month, day);
  const back = partsOf(parsed);
  // Date rolls 2025-02-30 over into March; the date must exist as written.
  return back.year === year && back.month === month && back.day === day ? parsed : 'calendar';
}

export function formatCalendarDate(day: number): string {
  const { year, month, day: date } = partsOf(day);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(date).padStart(2, '0')}`;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The wall-clock reading in `timeZone` at `instant`, as milliseconds on the UTC time line. */
function wallClock(instant: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const date = new Date(0);
  date.setUTCFullYear(parts.year, parts.month - 1, parts.day);
  date.setUTCHours(parts.hour, parts.minute, parts.second, mod(instant, 1000));
  return date.getTime();
}

/** `YYYY-MM-DD HH:MM`: the wall-clock reading in `timeZone` at `instant`, to the minute (transcripts). */
export function localMinuteOf(instant: Date, timeZone: string): string {
  return new Date(wallClock(instant.getTime(), timeZone)).toISOString().slice(0, 16).replace('T', ' ');
}

function offsetAt(instant: number, timeZone: string): number {
  return wallClock(instant, timeZone) - instant;
}

/** The local calendar date of `instant` in `timeZone`. */
export function localDayOf(instant: Date, timeZone: string): number {
  return Math.floor(wallClock(instant.getTime(), timeZone) / DAY_MS);
}

/**
 * The first instant at which the clocks of `timeZone` read `wall` (a wall-clock reading as milliseconds on the UTC
 * time line) or later. A reading normally happens once; when a change of offset repeats it (autumn), the earlier
 * occurrence; when a change skips it (spring), the change itself, the first instant past it. The two offsets in
 * force a day either side cover every change near that reading.
 */
export function firstInstantAt(wall: number, timeZone: string): number {
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  if (before === after) {
    const instant = wall - before;
    if (wallClock(instant, timeZone) === wall) return instant;
  }
  const exact = [wall - before, wall - after].filter((instant) => wallClock(instant, timeZone) === wall);
  if (exact.length > 0) return Math.min(...exact);
  // Skipped: the clock jumps over the reading somewhere between these two instants (offsets are whole seconds).
  let [notYet, reached] = [Math.min(wall - after, wall - before), Math.max(wall - after, wall - before)];
  while (reached - notYet > 1000) {
    const middle = notYet + Math.floor((reached - notYet) / 2000) * 1000;
    if (wallClock(middle, timeZone) >= wall) reached = middle;
    else notYet = middle;
  }
  return reached;
}

/** The first instant of a local calendar day (see firstInstantAt: a midnight skipped by DST begins at the change). */
export function startOfLocalDay(day: number, timeZone: string): Date {
  return new Date(firstInstantAt(day * DAY_MS, timeZone));
}
