import { Injectable } from '@nestjs/common';
import type { ConversationStatus } from '../../conversations/conversation.schema.js';
import { ConversationsRepository } from '../../conversations/conversations.repository.js';
import type { Types } from 'mongoose';
import type { CompanyId } from '../../database/tenancy/tenant-repository.js';
import type { BucketRow } from '../metrics-series.js';
import { bucketOf, within, type BucketWindow } from './bucket-window.js';

const OPEN_STATUSES = ['bot', 'queued', 'human'] as const satisfies readonly ConversationStatus[];
type OpenStatus = (typeof OPEN_STATUSES)[number];

/** One agent's conversation figures over a range (the agents report); counts absent when zero. */
export interface AgentConversationRow {
  _id: Types.ObjectId;
  assigned?: number;
  closed?: number;
  resolutionMs?: number;
  slaBreaches?: number;
  firstResponses?: number;
  firstResponseMs?: number;
  csatResponses?: number;
  csatRatingSum?: number;
}

export interface ConversationSnapshot {
  open: { _id: OpenStatus; count: number; oldestQueuedAt: Date | null }[];
  closedToday: { count: number }[];
  firstResponses: { count: number; totalMs: number }[];
}

const firstResponseMs = { $subtract: ['$firstResponseAt', '$createdAt'] };
/** Under an SLA policy (now or before a priority change), and whether it missed a target. */
const underSla = { $eq: [{ $type: '$sla' }, 'object'] };
const breachedSla = { $gt: [{ $size: { $ifNull: ['$sla.breaches', []] } }, 0] };
/** Conversations closed under an SLA policy, counted as met or breached. */
export const SLA_OUTCOMES = {
  slaBreaches: { $sum: { $cond: [{ $and: [underSla, breachedSla] }, 1, 0] } },
  slaMet: { $sum: { $cond: [{ $and: [underSla, { $not: [breachedSla] }] }, 1, 0] } },
};

/**
 * Conversation figures, one aggregation each for metrics and dashboard: a leading `$match` whose `$or` branches
 * are each served by an index ({companyId, createdAt}, {companyId, closedAt}, {companyId, firstResponseAt},
 * {companyId, csat.submittedAt}, {companyId, status}), then a `$facet` per figure, because the figures are anchored on different dates: each
 * counts where its event happened, so a past bucket does not change when a late answer or close arrives. Run
 * through ConversationsRepository, the one way to the conversations collection.
 */
@Injectable()
export class ConversationAnalytics {
  constructor(private readonly conversations: ConversationsRepository) {}

  /**
   * Created figures by createdAt, first responses by firstResponseAt, closed, resolution and SLA outcomes by closedAt,
   * ratings by the time they were given.
   */
  async buckets(companyId: CompanyId, window: BucketWindow): Promise<BucketRow[]> {
    const range = within(window);
    const [facets] = await this.conversations.aggregate<{ created: BucketRow[]; answered: BucketRow[]; closed: BucketRow[]; rated: BucketRow[] }>(companyId, [
      { $match: { $or: [{ createdAt: range }, { firstResponseAt: range }, { closedAt: range }, { 'csat.submittedAt': range }] } },
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
                ...SLA_OUTCOMES,
              },
            },
          ],
          rated: [
            { $match: { 'csat.submittedAt': range } },
            { $group: { _id: bucketOf('$csat.submittedAt', window), csatResponses: { $sum: 1 }, csatRatingSum: { $sum: '$csat.rating' } } },
          ],
        },
      },
    ]);
    return [...facets.created, ...facets.answered, ...facets.closed, ...facets.rated];
  }

  /**
   * Per assigned agent, over [start, end): conversations assigned (by assignedAt), closed with their resolution time
   * and SLA breaches (by closedAt), first answered (by firstResponseAt) and rated (by csat.submittedAt); each branch
   * on its index. A conversation counts for the agent it is (or was last) assigned to.
   */
  async byAgent(companyId: CompanyId, range: { $gte: Date; $lt: Date }): Promise<AgentConversationRow[]> {
    const assigned = { assignedAgentId: { $ne: null } };
    const [facets] = await this.conversations.aggregate<Record<'assigned' | 'closed' | 'answered' | 'rated', AgentConversationRow[]>>(companyId, [
      { $match: { $or: [{ assignedAt: range }, { closedAt: range }, { firstResponseAt: range }, { 'csat.submittedAt': range }] } },
      {
        $facet: {
          assigned: [{ $match: { assignedAt: range, ...assigned } }, { $group: { _id: '$assignedAgentId', assigned: { $sum: 1 } } }],
          closed: [
            { $match: { closedAt: range, ...assigned } },
            {
              $group: {
                _id: '$assignedAgentId',
                closed: { $sum: 1 },
                resolutionMs: { $sum: { $subtract: ['$closedAt', '$createdAt'] } },
                slaBreaches: SLA_OUTCOMES.slaBreaches,
              },
            },
          ],
          answered: [
            { $match: { firstResponseAt: range, ...assigned } },
            { $group: { _id: '$assignedAgentId', firstResponses: { $sum: 1 }, firstResponseMs: { $sum: firstResponseMs } } },
          ],
          rated: [
            { $match: { 'csat.submittedAt': range, ...assigned } },
            { $group: { _id: '$assignedAgentId', csatResponses: { $sum: 1 }, csatRatingSum: { $sum: '$csat.rating' } } },
          ],
        },
      },
    ]);
    return [...facets.assigned, ...facets.closed, ...facets.answered, ...facets.rated];
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
