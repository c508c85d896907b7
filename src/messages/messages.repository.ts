import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, Types } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import type { MessagePosition, PageDirection } from './message-cursor.js';
import { Message } from './message.schema.js';

export interface MessageWindow {
  direction: PageDirection;
  /** Exclusive start: a time (from `before`/`after`) or a position (from a cursor, ties broken by `_id`). */
  from: Date | MessagePosition | null;
  /** Exclusive upper bound of a `newer` window (the `before` of an after/before window). */
  until: Date | null;
  limit: number;
}

@Injectable()
export class MessagesRepository extends TenantRepository<Message> {
  constructor(@InjectModel(Message.name) model: Model<Message>) {
    super(model);
  }

  /**
   * Up to `limit` messages of a conversation beyond `from` in `direction`, in that direction's
   * order (`older`: newest first). Keyset on (createdAt, _id), served by the
   * { companyId, conversationId, createdAt, _id } index in either direction.
   */
  async window(companyId: CompanyId, conversationId: Types.ObjectId, window: MessageWindow): Promise<Stored<Message>[]> {
    const older = window.direction === 'older';
    const beyond = older ? '$lt' : '$gt';
    const filter: QueryFilter<Message> = { conversationId };
    if (window.from instanceof Date) {
      filter.createdAt = { [beyond]: window.from };
    } else if (window.from) {
      filter.$or = [
        { createdAt: { [beyond]: window.from.createdAt } },
        { createdAt: window.from.createdAt, _id: { [beyond]: window.from.id } },
      ];
    }
    if (window.until) filter.createdAt = { ...filter.createdAt, $lt: window.until };
    const order = older ? -1 : 1;
    return this.find(companyId, filter, { sort: { createdAt: order, _id: order }, limit: window.limit });
  }

  /** The message's event is published: nothing left to recover. */
  async clearPendingEvent(companyId: CompanyId, id: Types.ObjectId): Promise<void> {
    await this.model.updateOne(this.scope(companyId, { _id: id }), { $unset: { pendingEvent: 1 } }).exec();
  }

  /**
   * Claims one message whose event has been pending since `staleBefore` or earlier, by moving its
   * `since` to `now`, so that other processes leave it alone for as long again. The one cross-tenant
   * query of messages: the recovery serves every company and learns the company from the message.
   */
  async claimStalePendingEvent(staleBefore: Date, now: Date): Promise<Stored<Message> | null> {
    return (await this.model
      .findOneAndUpdate({ 'pendingEvent.since': { $lte: staleBefore } }, { $set: { 'pendingEvent.since': now } }, { returnDocument: 'after' })
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Stored<Message> | null;
  }
}
