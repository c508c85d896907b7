import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { TenantRepository, type CompanyId } from '../../database/tenancy/tenant-repository.js';
import { Message, type MessageDirection } from '../../messages/message.schema.js';
import type { BucketRow } from '../metrics-series.js';
import { bucketOf, within, type BucketWindow } from './bucket-window.js';

/** Private notes (`internal`) are no message received or sent: they count nowhere. */
const COUNTER: Record<MessageDirection, 'messagesReceived' | 'messagesSent' | null> = {
  inbound: 'messagesReceived',
  outbound: 'messagesSent',
  internal: null,
};

/** The delivery statuses that are final, and so counted by the time they were reached (`delivery.updatedAt`). */
const FINAL_COUNTER = { read: 'messagesRead', failed: 'messagesFailed' } as const;
type FinalStatus = keyof typeof FINAL_COUNTER;
const FINAL_STATUSES = Object.keys(FINAL_COUNTER) as FinalStatus[];

/**
 * Message figures, three aggregations run together, each on its own index: counts by direction on
 * {companyId, createdAt}; delivered by `delivery.deliveredAt` on {companyId, delivery.deliveredAt}; read and failed
 * by the time they were reached on {companyId, delivery.status, delivery.updatedAt} (both are final statuses, so that
 * time never moves). Grouping on the direction or status too (two rows per bucket at most) is cheaper than a
 * conditional sum evaluated for every message.
 */
@Injectable()
export class MessageAnalyticsRepository extends TenantRepository<Message> {
  constructor(@InjectModel(Message.name) model: Model<Message>) {
    super(model);
  }

  async buckets(companyId: CompanyId, window: BucketWindow): Promise<BucketRow[]> {
    const range = within(window);
    const [byDirection, delivered, final] = await Promise.all([
      this.aggregate<{ _id: { bucket: Date; direction: MessageDirection }; count: number }>(companyId, [
        { $match: { createdAt: range } },
        { $group: { _id: { bucket: bucketOf('$createdAt', window), direction: '$direction' }, count: { $sum: 1 } } },
      ]),
      this.aggregate<BucketRow>(companyId, [
        { $match: { 'delivery.deliveredAt': range } },
        { $group: { _id: bucketOf('$delivery.deliveredAt', window), messagesDelivered: { $sum: 1 } } },
      ]),
      this.aggregate<{ _id: { bucket: Date; status: FinalStatus }; count: number }>(companyId, [
        { $match: { 'delivery.status': { $in: FINAL_STATUSES }, 'delivery.updatedAt': range } },
        { $group: { _id: { bucket: bucketOf('$delivery.updatedAt', window), status: '$delivery.status' }, count: { $sum: 1 } } },
      ]),
    ]);
    return [
      ...byDirection.flatMap(({ _id, count }) => {
        const counter = COUNTER[_id.direction];
        return counter ? [{ _id: _id.bucket, [counter]: count }] : [];
      }),
      ...delivered,
      ...final.map(({ _id, count }) => ({ _id: _id.bucket, [FINAL_COUNTER[_id.status]]: count })),
    ];
  }

  /** Messages received and sent since `since`, and those that failed since then. */
  async countSince(companyId: CompanyId, since: Date): Promise<{ received: number; sent: number; failed: number }> {
    const [rows, failed] = await Promise.all([
      this.aggregate<{ _id: MessageDirection; count: number }>(companyId, [
        { $match: { createdAt: { $gte: since } } },
        { $group: { _id: '$direction', count: { $sum: 1 } } },
      ]),
      this.count(companyId, { 'delivery.status': 'failed', 'delivery.updatedAt': { $gte: since } }),
    ]);
    const count = (direction: MessageDirection) => rows.find((row) => row._id === direction)?.count ?? 0;
    return { received: count('inbound'), sent: count('outbound'), failed };
  }

  /** Messages each agent sent over [start, end), on {companyId, createdAt}. */
  async sentByAgent(companyId: CompanyId, range: { $gte: Date; $lt: Date }): Promise<{ _id: Types.ObjectId; messagesSent: number }[]> {
    return this.aggregate(companyId, [
      { $match: { createdAt: range, direction: 'outbound', senderType: 'agent' } },
      { $group: { _id: '$senderId', messagesSent: { $sum: 1 } } },
    ]);
  }
}
