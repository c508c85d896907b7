import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { markDueUpdate } from '../lanes/lane-store.js';
import type { WebhookEventName } from './webhook-events.js';
import { Webhook } from './webhook.schema.js';

@Injectable()
export class WebhooksRepository extends TenantRepository<Webhook> {
  constructor(@InjectModel(Webhook.name) model: Model<Webhook>) {
    super(model);
  }

  /** The active webhooks subscribed to any of `names` (both forms of one event). */
  async subscribers(companyId: CompanyId, names: readonly WebhookEventName[]): Promise<Stored<Webhook>[]> {
    return this.find(companyId, { isActive: true, events: { $in: [...names] } }, { projection: { events: 1, channels: 1, activeSince: 1 } });
  }

  /**
   * Tells the lanes that deliveries became pending, due from `at`: must follow the write that made
   * them pending, so that a worker whose view of the queue predates it notices (queueVersion).
   */
  async markQueued(companyId: CompanyId, webhookIds: Types.ObjectId[], at: Date): Promise<void> {
    await this.model.updateMany(this.scope(companyId, { _id: { $in: webhookIds } }), markDueUpdate<Webhook>(at)).exec();
  }

  async disable(companyId: CompanyId, webhookId: Types.ObjectId, reason: string): Promise<void> {
    await this.model.updateOne(this.scope(companyId, { _id: webhookId }), { $set: { isActive: false, disabledReason: reason } }).exec();
  }
}
