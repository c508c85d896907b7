import type { Granularity } from '../calendar.js';

/** The instants of a metrics range, [start, end), and how to cut it into buckets. */
export interface BucketWindow {
  start: Date;
  end: Date;
  granularity: Granularity;
  timeZone: string;
}

/** A range condition on an indexed date field: every pipeline's leading `$match` uses it. */
export function within(window: BucketWindow): { $gte: Date; $lt: Date } {
  return { $gte: window.start, $lt: window.end };
}

/** The local start of the bucket holding `field` (an expression such as '$createdAt'). */
export function bucketOf(field: string, window: BucketWindow): Record<string, unknown> {
  return {
    $dateTrunc: {
      date: field,
      unit: window.granularity,
      timezone: window.timeZone,
      ...(window.granularity === 'week' ? { startOfWeek: 'monday' } : {}),
    },
  };
}
