import { ApiProperty } from '@nestjs/swagger';
import { GRANULARITIES, type Granularity } from '../calendar.js';

export class MetricsFiguresView {
  @ApiProperty({ example: 42, description: 'Conversations created (by createdAt)' })
  conversationsCreated: number;

  @ApiProperty({
    example: 37,
    description: 'Conversations closed (by closedAt): counted where they were closed, whenever they were created',
  })
  conversationsClosed: number;

  @ApiProperty({ example: 310, description: 'Inbound messages (from contacts)' })
  messagesReceived: number;

  @ApiProperty({ example: 295, description: 'Outbound messages (by agents, bots and flows)' })
  messagesSent: number;

  @ApiProperty({ example: 12, description: 'Flow executions started (by createdAt), failed ones included' })
  flowsExecuted: number;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 94.5,
    description:
      'Mean seconds from creation to first response, over the conversations first answered here (anchored on ' +
      'firstResponseAt, like resolution on closedAt, so a past bucket never changes); null when there is none. ' +
      'Millisecond precision',
  })
  avgFirstResponseSeconds: number | null;

  @ApiProperty({
    type: Number,
    nullable: true,
    example: 5400.25,
    description:
      'Mean seconds from creation to close, over the conversations closed here (anchored on closedAt); null when ' +
      'there is none. Millisecond precision',
  })
  avgResolutionSeconds: number | null;
}

export class MetricsBucketView extends MetricsFiguresView {
  @ApiProperty({
    type: String,
    format: 'date',
    example: '2025-03-03',
    description:
      'Local start of the bucket: the day, the Monday of the ISO week, or the 1st of the month. The first and last ' +
      'week or month buckets may start before or end after the range; they count only what falls inside it',
  })
  period: string;
}

export class MetricsView {
  @ApiProperty({ type: String, format: 'date', example: '2025-03-01' }) startDate: string;
  @ApiProperty({ type: String, format: 'date', example: '2025-03-31' }) endDate: string;
  @ApiProperty({ enum: GRANULARITIES, example: 'week' }) granularity: Granularity;

  @ApiProperty({ example: 'Europe/Paris', description: 'The company time zone (settings) the days are counted in' })
  timezone: string;

  @ApiProperty({ type: [MetricsBucketView], description: 'Every bucket of the range in order, empty ones included' })
  series: MetricsBucketView[];

  @ApiProperty({
    type: MetricsFiguresView,
    description: 'The whole range: sums of the counts; averages over every contributing conversation (not a mean of bucket means)',
  })
  totals: MetricsFiguresView;
}
