import { Injectable } from '@nestjs/common';
import type { ConversationStatus } from '../../conversations/conversation.schema.js';
import { ConversationsRepository } from '../../conversations/conversations.repository.js';
import type { CompanyId } from '../../database/tenancy/tenant-repository.js';
import type { BucketRow } from '../metrics-series.js';
import { bucketOf, within, type BucketWindow } from './bucket-window.js';

const OPEN_STATUSES = ['bot', 'queued', 'human'] as const satisfies readonly ConversationStatus[];
type OpenStatus = (typeof OPEN_STATUSES)[number];

export interface ConversationSnapshot {
  open: { _id: OpenStatus; count: number; oldestQueuedAt: Date | null }[];
  closedToday: { count: number }[];
  firstResponses: { count: number; totalMs: number }[];
}

const firstResponseMs = { $subtract: ['$firstResponseAt', '$createdAt'] };

/**
 * Conversation figures, one aggregation each for metrics and dashboard: a leading `$match` whose `$or` branches
 * are each served by an index ({companyId, createdAt}, {companyId, closedAt}, {companyId, firstResponseAt},
 * {companyId, status}), then a `$facet` per figure, because the figures are anchored on different dates: each
 * counts where its event happened, so a past bucket does not change when a late answer or close arrives. Run
 * through ConversationsRepository, the one way to the conversations collection.
 */
@Injectable()
export class ConversationAnalytics {
  constructor(private readonly conversations: ConversationsRepository) {}

  /** Created figures by createdAt, first responses by firstResponseAt, closed and resolution figures by closedAt. */
  async buckets(companyId: CompanyId, window: BucketWindow): Promise<BucketRow[]> {
    const range = within(window);
    const [facets] = await this.conversations.aggregate<{ created: BucketRow[]; answered: BucketRow[]; closed: BucketRow[] }>(companyId, [
      { $match: { $or: [{ createdAt: range }, { firstResponseAt: range }, { closedAt: range }] } },
      {
        $facet: {
          created: [
            { $match: { createdAt: range } },
            { $group: { _id: bucketOf('$createdAt', window), conversationsCreated: { $sum: 1 } } },
          ],
          answered: [
            { $match: { firstResponseAt: range } },
            {
              $group: {
                _id: bucketOf('$firstResponseAt', window),
                firstResponses: { $sum: 1 },
                firstResponseMs: { $sum: firstResponseMs },
              },
            },
          ],
          closed: [
            { $match: { closedAt: range } },
            {
              $group: {
                _id: bucketOf('$closedAt', window),
                conversationsClosed: { $sum: 1 },
                resolutions: { $sum: 1 },
                resolutionMs: { $sum: { $subtract: ['$closedAt', '$createdAt'] } },
              },
            },
          ],
        },
      },
    ]);
    return [...facets.created, ...facets.answered, ...facets.closed];
  }

  /** Open conversations by status (with the oldest queue entry), and what was closed or first answered since `since`. */
  async snapshot(companyId: CompanyId, since: Date): Promise<ConversationSnapshot> {
    const open = { $in: OPEN_STATUSES };
    const [snapshot] = await this.conversations.aggregate<ConversationSnapshot>(companyId, [
      { $match: { $or: [{ status: open }, { closedAt: { $gte: since } }, { firstResponseAt: { $gte: since } }] } },
      {
        $facet: {
          open: [
            { $match: { status: open } },
            { $group: { _id: '$status', count: { $sum: 1 }, oldestQueuedAt: { $min: '$queuedAt' } } },
          ],
          closedToday: [{ $match: { closedAt: { $gte: since } } }, { $count: 'count' }],
          firstResponses: [
            { $match: { firstResponseAt: { $gte: since } } },
            { $group: { _id: null, count: { $sum: 1 }, totalMs: { $sum: firstResponseMs } } },
          ],
        },
      },
    ]);
    return snapshot;
  }
}
