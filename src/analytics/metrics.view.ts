import { ApiProperty } from '@nestjs/swagger';
import type { Granularity } from './calendar.js';

export class MetricsFiguresView {
  /**
   * Conversations created (by createdAt)
   * @example 42
   */
  conversationsCreated: number;

  /**
   * Conversations closed (by closedAt): counted where they were closed, whenever they were created
   * @example 37
   */
  conversationsClosed: number;

  /**
   * Inbound messages (from contacts)
   * @example 310
   */
  messagesReceived: number;

  /**
   * Outbound messages (by agents, bots and flows)
   * @example 295
   */
  messagesSent: number;

  /**
   * Outbound messages delivered, counted where the delivery happened (the delivered report's occurredAt, or its
   * arrival): a message reported read without a delivered report first counts as delivered when it was read. Each
   * message counts once, even when read in a later bucket
   * @example 270
   */
  messagesDelivered: number;

  /**
   * Outbound messages read, counted where they were read (the read report's time)
   * @example 190
   */
  messagesRead: number;

  /**
   * Outbound messages that failed, counted where they failed (the failure report's time)
   * @example 6
   */
  messagesFailed: number;

  /**
   * Flow executions started (by createdAt), failed ones included
   * @example 12
   */
  flowsExecuted: number;

  /**
   * Mean seconds from creation to first response, over the conversations first answered here (anchored on
   * firstResponseAt, like resolution on closedAt, so a past bucket never changes); null when there is none.
   * Millisecond precision
   * @example 94.5
   */
  avgFirstResponseSeconds: number | null;

  /**
   * Mean seconds from creation to close, over the conversations closed here (anchored on closedAt); null when there
   * is none. Millisecond precision
   * @example 5400.25
   */
  avgResolutionSeconds: number | null;

  /**
   * Conversations closed here (by closedAt) that missed at least one target of their SLA policy
   * @example 3
   */
  slaBreaches: number;

  /**
   * Conversations closed here (by closedAt) under an SLA policy that missed none of its targets; with slaBreaches,
   * the hit rate is slaMet / (slaMet + slaBreaches)
   * @example 31
   */
  slaMet: number;

  /**
   * Satisfaction ratings given here (by the time they were given)
   * @example 12
   */
  csatResponses: number;

  /**
   * Mean of those ratings (1 to 5), to two decimals; null when there is none
   * @example 4.42
   */
  csatAverage: number | null;
}

export class MetricsBucketView extends MetricsFiguresView {
  /**
   * Local start of the bucket: the day, the Monday of the ISO week, or the 1st of the month. The first and last week
   * or month buckets may start before or end after the range; they count only what falls inside it
   * @example 2025-03-03
   */
  @ApiProperty({ format: 'date' })
  period: string;
}

export class MetricsView {
  /** @example 2025-03-01 */
  @ApiProperty({ format: 'date' }) startDate: string;
  /** @example 2025-03-31 */
  @ApiProperty({ format: 'date' }) endDate: string;
  /** @example week */
  granularity: Granularity;

  /**
   * The company time zone (settings) the days are counted in
   * @example Europe/Paris
   */
  timezone: string;

  /** Every bucket of the range in order, empty ones included */
  series: MetricsBucketView[];

  /** The whole range: sums of the counts; averages over every contributing conversation (not a mean of bucket means) */
  totals: MetricsFiguresView;
}
