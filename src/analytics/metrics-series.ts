import { formatCalendarDate, localDayOf } from '../common/calendar-dates.js';
import type { MetricsBucketView, MetricsFiguresView } from './metrics.view.js';

/** What the pipelines add up per bucket; averages are kept as a count and a sum so that they combine exactly. */
export const COUNTERS = [
  'conversationsCreated',
  'conversationsClosed',
  'messagesReceived',
  'messagesSent',
  'messagesDelivered',
  'messagesRead',
  'messagesFailed',
  'flowsExecuted',
  'firstResponses',
  'firstResponseMs',
  'resolutions',
  'resolutionMs',
  'slaBreaches',
  'slaMet',
  'csatResponses',
  'csatRatingSum',
] as const;
export type Counters = Record<(typeof COUNTERS)[number], number>;

/** One `$group` output row: `_id` is the bucket's `$dateTrunc` (its local start), with some of the counters. */
export type BucketRow = { _id: Date } & Partial<Counters>;

const zero = (): Counters => Object.fromEntries(COUNTERS.map((name) => [name, 0])) as Counters;

/** Mean in seconds at millisecond precision, or null without items. */
export function meanSeconds(totalMs: number, count: number): number | null {
  return count === 0 ? null : Math.round(totalMs / count) / 1000;
}

/** Mean rating to two decimals, or null without ratings. */
export function meanRating(sum: number, count: number): number | null {
  return count === 0 ? null : Math.round((sum / count) * 100) / 100;
}

function figures(counters: Counters): MetricsFiguresView {
  return {
    conversationsCreated: counters.conversationsCreated,
    conversationsClosed: counters.conversationsClosed,
    messagesReceived: counters.messagesReceived,
    messagesSent: counters.messagesSent,
    messagesDelivered: counters.messagesDelivered,
    messagesRead: counters.messagesRead,
    messagesFailed: counters.messagesFailed,
    flowsExecuted: counters.flowsExecuted,
    avgFirstResponseSeconds: meanSeconds(counters.firstResponseMs, counters.firstResponses),
    avgResolutionSeconds: meanSeconds(counters.resolutionMs, counters.resolutions),
    slaBreaches: counters.slaBreaches,
    slaMet: counters.slaMet,
    csatResponses: counters.csatResponses,
    csatAverage: meanRating(counters.csatRatingSum, counters.csatResponses),
  };
}

/**
 * The series of a range: every enumerated bucket starts at zero, so empty ones are present, and the rows of all
 * pipelines are added into the bucket of their local start date. Formatting only: no document passes through here.
 */
export class MetricsSeries {
  private readonly buckets = new Map<number, Counters>();

  constructor(
    private readonly timeZone: string,
    bucketStarts: number[],
  ) {
    for (const start of bucketStarts) this.buckets.set(start, zero());
  }

  add(rows: BucketRow[]): this {
    for (const row of rows) {
      const bucket = this.buckets.get(localDayOf(row._id, this.timeZone));
      // The pipelines match only the range, whose buckets are all enumerated: anything else is a bug, not data.
      if (!bucket) throw new Error(`Aggregation produced a bucket outside the range: ${row._id.toISOString()}`);
      for (const name of COUNTERS) bucket[name] += row[name] ?? 0;
    }
    return this;
  }

  series(): MetricsBucketView[] {
    return [...this.buckets].map(([start, counters]) => ({ period: formatCalendarDate(start), ...figures(counters) }));
  }

  totals(): MetricsFiguresView {
    const sum = zero();
    for (const counters of this.buckets.values()) for (const name of COUNTERS) sum[name] += counters[name];
    return figures(sum);
  }
}
