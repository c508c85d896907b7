import { Injectable } from '@nestjs/common';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import type { Conversation } from './conversation.schema.js';
import type { QueueStandingView } from './conversation.view.js';
import { ConversationQueueRepository } from './conversation-queue.repository.js';

/** Where a queued conversation stands in its queue (contract section 19): a count on the queue's index. */
@Injectable()
export class QueueStanding {
  constructor(
    private readonly queues: ConversationQueueRepository,
    private readonly clock: Clock,
  ) {}

  /** Null unless it is `queued` and awake (a snoozed one waits outside the routing order). */
  async of(
    companyId: CompanyId,
    conversation: Pick<Stored<Conversation>, '_id' | 'status' | 'teamId' | 'priority' | 'queuedAt' | 'snoozedUntil'>,
  ): Promise<QueueStandingView | null> {
    if (conversation.status !== 'queued' || !conversation.queuedAt || conversation.snoozedUntil) return null;
    const teamId = conversation.teamId ?? null;
    const ahead = await this.queues.aheadInQueue(companyId, teamId, {
      priority: conversation.priority,
      queuedAt: conversation.queuedAt,
      id: conversation._id,
    });
    return { teamId: teamId?.toHexString() ?? null, position: ahead + 1, waitingSeconds: this.waitingSeconds(conversation.queuedAt) };
  }

  waitingSeconds(queuedAt: Date): number {
    return Math.max(0, Math.floor((this.clock.now().getTime() - queuedAt.getTime()) / 1000));
  }
}
