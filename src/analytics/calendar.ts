/**
 * Calendar dates and their time-zone instants for analytics. A calendar date is a day number (days since
 * 1970-01-01, proleptic Gregorian), so that day, week and month arithmetic is plain integer arithmetic and
 * never meets a time zone; zones appear only where a date becomes an instant (start of a local day) or back.
 */

export const GRANULARITIES = ['day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

const DAY_MS = 86_400_000;
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const mod = (a: number, n: number) => ((a % n) + n) % n;

function dayNumber(year: number, month: number, day: number): number {
  const date = new Date(0);
  // setUTCFullYear, unlike Date.UTC, does not read years 0-99 as 1900-1999.
  date.setUTCFullYear(year, month - 1, day);
  return date.getTime() / DAY_MS;
}

function partsOf(day: number): { year: number; month: number; day: number } {
  const date = new Date(day * DAY_MS);
  return { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate() };
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

/** The first day of the bucket holding `day`: the day itself, the Monday on or before it (ISO week), or the 1st of its month. */
export function bucketStart(day: number, granularity: Granularity): number {
  if (granularity === 'day') return day;
  // Day 0 (1970-01-01) was a Thursday, three days after a Monday.
  if (granularity === 'week') return day - mod(day + 3, 7);
  const { year, month } = partsOf(day);
  return dayNumber(year, month, 1);
}

function nextBucket(start: number, granularity: Granularity): number {
  if (granularity === 'day') return start + 1;
  if (granularity === 'week') return start + 7;
  const { year, month } = partsOf(start);
  return dayNumber(year, month + 1, 1);
}

/** Every bucket from the one holding `first` to the one holding `last`, as the day numbers they start on. */
export function enumerateBuckets(first: number, last: number, granularity: Granularity): number[] {
  const buckets: number[] = [];
  for (let start = bucketStart(first, granularity); start <= last; start = nextBucket(start, granularity)) {
    buckets.push(start);
  }
  return buckets;
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
 * The first instant of a local calendar day. Midnight normally exists once; when a change of offset repeats
 * it, the earlier occurrence; when a DST change skips it (Cairo, Beirut, Havana...), the day begins at the
 * change itself. The two offsets in force a day either side cover every change near that midnight.
 */
export function startOfLocalDay(day: number, timeZone: string): Date {
  const midnight = day * DAY_MS;
  const before = offsetAt(midnight - DAY_MS, timeZone);
  const after = offsetAt(midnight + DAY_MS, timeZone);
  const exact = [midnight - before, midnight - after].filter((instant) => wallClock(instant, timeZone) === midnight);
  if (exact.length > 0) return new Date(Math.min(...exact));
  // Skipped: the clock jumps over midnight somewhere between these two instants (offsets are whole seconds).
  let [notYet, begun] = [midnight - after, midnight - before];
  while (begun - notYet > 1000) {
    const middle = notYet + Math.floor((begun - notYet) / 2000) * 1000;
    if (wallClock(middle, timeZone) >= midnight) begun = middle;
    else notYet = middle;
  }
  return new Date(begun);
}
