import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, ProjectionType, QueryFilter, Types } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Conversation, type Priority } from './conversation.schema.js';

/** The order queues are served in: priority first. */
export const QUEUE_PRIORITIES: readonly Priority[] = ['high', 'medium', 'low'];

/** A place in a queue's routing order. */
export interface QueuePosition {
  priority: Priority;
  queuedAt: Date;
  id: Types.ObjectId;
}

/**
 * The queues' reads of the conversations collection (contract section 19): a queue's page and a place in it, in
 * routing order, on the index {companyId, status, teamId, priority, snoozedUntil, queuedAt, _id}. Routing and the
 * queue views read through it; every write stays with ConversationsRepository.
 */
@Injectable()
export class ConversationQueueRepository extends TenantRepository<Conversation> {
  constructor(@InjectModel(Conversation.name) model: Model<Conversation>) {
    super(model);
  }

  /**
   * A page of a queue (a team's, or the company's: `teamId` null) in routing order after `after`: awake `queued`
   * conversations by priority (high first), then `queuedAt` and id, one index interval per priority
   * ({companyId, status, teamId, priority, snoozedUntil, queuedAt, _id}), so a page costs its rows whatever the queue's length.
   */
  async queuePage(
    companyId: CompanyId,
    teamId: Types.ObjectId | null,
    after: QueuePosition | null,
    limit: number,
    projection?: ProjectionType<Conversation>,
  ): Promise<Stored<Conversation>[]> {
    const rows: Stored<Conversation>[] = [];
    const start = after ? QUEUE_PRIORITIES.indexOf(after.priority) : 0;
    for (const priority of QUEUE_PRIORITIES.slice(start)) {
      const filter: QueryFilter<Conversation> = { status: 'queued', teamId, priority, snoozedUntil: null };
      if (after && priority === after.priority) {
        filter.$or = [{ queuedAt: { $gt: after.queuedAt } }, { queuedAt: after.queuedAt, _id: { $gt: after.id } }];
      }
      rows.push(...(await this.findPlain(companyId, filter, { sort: { queuedAt: 1, _id: 1 }, limit: limit - rows.length, projection })));
      if (rows.length >= limit) break;
    }
    return rows;
  }

  /** How many conversations are ahead of `at` in its queue (routing order): its position less one. */
  async aheadInQueue(companyId: CompanyId, teamId: Types.ObjectId | null, at: QueuePosition): Promise<number> {
    let ahead = 0;
    for (const priority of QUEUE_PRIORITIES.slice(0, QUEUE_PRIORITIES.indexOf(at.priority))) {
      ahead += await this.countPlain(companyId, { status: 'queued', teamId, priority, snoozedUntil: null });
    }
    return (
      ahead +
      (await this.countPlain(companyId, {
        status: 'queued',
        teamId,
        priority: at.priority,
        snoozedUntil: null,
        $or: [{ queuedAt: { $lt: at.queuedAt } }, { queuedAt: at.queuedAt, _id: { $lt: at.id } }],
      }))
    );
  }
}
