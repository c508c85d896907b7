/**
 * `$dateTrunc` replacing mingo's, which truncates in UTC and only shifts the result by the zone offset: with a
 * `timezone`, dates late in the local evening land in the wrong day/week/month (e.g. Sunday 23:00 in New York is
 * Monday in UTC). This version truncates the local wall-clock time, then converts the bin start back to an instant
 * with the offset in force at that moment (so DST changes between the date and its bin start are handled).
 * Bins are anchored, as in MongoDB, at 2000-01-01T00:00 local time (for weeks, the first `startOfWeek` on or after it).
 */
import { ObjectId, Timestamp, type Document } from 'bson';
import { evalExpr } from 'mingo/core';
import type { ExpressionOperator, Options } from 'mingo/types';
import { MongoCommandError } from '../errors.js';

const MS: Record<string, number> = { millisecond: 1, second: 1000, minute: 60_000, hour: 3_600_000, day: 86_400_000 };
const MONTHS: Record<string, number> = { month: 1, quarter: 3, year: 12 };
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const WEEKDAY_NAMES = new Set([
  ...WEEKDAYS,
  ...['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'],
]);
const REF_LOCAL = Date.UTC(2000, 0, 1); // a Saturday

const mod = (a: number, n: number) => ((a % n) + n) % n;

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsetCache = new Map<string, number>();

/** Offset (ms, local minus UTC) of `timezone` at instant `t`: fixed offsets parsed, Olson names through Intl. */
export function zoneOffset(timezone: string | undefined, t: number): number {
  if (!timezone || timezone === 'UTC' || timezone === 'GMT' || timezone === 'Z') return 0;
  const fixed = timezone.match(/^([+-])(\d{2}):?(\d{2})?$/);
  if (fixed) return (fixed[1] === '-' ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3] ?? 0)) * 60_000;
  // Zone transitions fall on quarter hours, so the offset is constant within one.
  const cacheKey = `${timezone}|${Math.floor(t / 900_000)}`;
  const cached = offsetCache.get(cacheKey);
  if (cached !== undefined) return cached;
  let fmt = formatters.get(timezone);
  if (!fmt) {
    try {
      fmt = new Intl.DateTimeFormat('en-US', {
        timeZone: timezone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      });
    } catch {
      throw new MongoCommandError(40485, `unrecognized time zone identifier: "${timezone}"`);
    }
    formatters.set(timezone, fmt);
  }
  const p: Record<string, number> = {};
  for (const part of fmt.formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  const offset = wall - (t - mod(t, 1000));
  if (offsetCache.size > 10_000) offsetCache.clear();
  offsetCache.set(cacheKey, offset);
  return offset;
}

/** The instant whose wall-clock time in `timezone` is `local` (the later offset wins inside a DST gap). */
function fromLocal(timezone: string | undefined, local: number): number {
  const guess = local - zoneOffset(timezone, local);
  return local - zoneOffset(timezone, guess);
}

function toDate(v: unknown): Date {
  if (v instanceof Date) return v;
  if (v instanceof ObjectId) return v.getTimestamp();
  if (v instanceof Timestamp) return new Date(v.high * 1000);
  throw new MongoCommandError(5439012, `$dateTrunc requires 'date' to be a date, but got ${typeof v}`);
}

export function truncateDate(date: Date, unit: string, binSize: number, timezone?: string, startOfWeek = 'sunday'): Date {
  const t = date.getTime();
  const local = t + zoneOffset(timezone, t);
  let binStart: number;
  if (unit in MONTHS) {
    const d = new Date(local);
    const months = (d.getUTCFullYear() - 2000) * 12 + d.getUTCMonth();
    const start = months - mod(months, binSize * MONTHS[unit]);
    binStart = Date.UTC(2000 + Math.floor(start / 12), mod(start, 12), 1);
  } else if (unit === 'week') {
    const firstDay = WEEKDAYS.indexOf(startOfWeek.toLowerCase().slice(0, 3));
    const ref = REF_LOCAL + mod(firstDay - 6, 7) * MS.day;
    binStart = local - mod(local - ref, binSize * 7 * MS.day);
  } else {
    binStart = local - mod(local - REF_LOCAL, binSize * MS[unit]);
  }
  return new Date(fromLocal(timezone, binStart));
}

export const $dateTrunc: ExpressionOperator = (obj: Document, expr: unknown, options: Options) => {
  const args = evalExpr(obj, expr, options) as Document;
  const { date, unit, binSize = 1, timezone, startOfWeek = 'sunday' } = args;
  if (date === null || date === undefined || unit === null || unit === undefined) return null;
  if (typeof unit !== 'string' || !(unit in MS || unit in MONTHS || unit === 'week'))
    throw new MongoCommandError(5439014, `$dateTrunc parameter 'unit' value cannot be recognized as a time unit: ${String(unit)}`);
  if (typeof binSize !== 'number' || !Number.isInteger(binSize) || binSize <= 0)
    throw new MongoCommandError(5439017, "$dateTrunc requires 'binSize' to be greater than 0");
  if (typeof startOfWeek !== 'string' || !WEEKDAY_NAMES.has(startOfWeek.toLowerCase()))
    throw new MongoCommandError(5439016, `$dateTrunc parameter 'startOfWeek' value cannot be recognized as a day of a week: ${String(startOfWeek)}`);
  if (timezone !== undefined && timezone !== null && typeof timezone !== 'string')
    throw new MongoCommandError(40517, "$dateTrunc requires 'timezone' to be a string");
  return truncateDate(toDate(date), unit, binSize, (timezone as string | null) ?? undefined, startOfWeek);
};
