/**
 * The buckets of analytics ranges: local days, ISO weeks and calendar months, as day numbers (see
 * common/calendar-dates.ts), so that their arithmetic is plain integer arithmetic.
 */
import { dayNumber, isoWeekdayIndex, partsOf } from '../common/calendar-dates.js';

export const GRANULARITIES = ['day', 'week', 'month'] as const;
export type Granularity = (typeof GRANULARITIES)[number];

/** The first day of the bucket holding `day`: the day itself, the Monday on or before it (ISO week), or the 1st of its month. */
export function bucketStart(day: number, granularity: Granularity): number {
  if (granularity === 'day') return day;
  if (granularity === 'week') return day - isoWeekdayIndex(day);
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
