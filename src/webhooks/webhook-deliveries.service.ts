import { Injectable, NotFoundException } from '@nestjs/common';
import type { Types } from 'mongoose';
import type { Page } from '../common/pagination/page.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { WebhookDeliveryLanes } from './delivery/webhook-delivery-lanes.js';
import type { ListDeliveriesQueryDto } from './dto/delivery-requests.dto.js';
import type { WebhookDelivery } from './webhook-delivery.schema.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { DELIVERY_ID_PREFIX, parsePublicId } from './webhook-ids.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/** The delivery log of a webhook, and redelivery. */
@Injectable()
export class WebhookDeliveriesService {
  constructor(
    private readonly webhooks: WebhooksService,
    private readonly webhookStore: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly lanes: WebhookDeliveryLanes,
  ) {}

  async page(companyId: CompanyId, webhookId: string, query: ListDeliveriesQueryDto): Promise<Page<Stored<WebhookDelivery>>> {
    const webhook = await this.webhooks.getStored(companyId, webhookId);
    const filter = query.status ? { webhookId: webhook._id, status: query.status } : { webhookId: webhook._id };
    return this.deliveries.page(companyId, filter, { limit: query.limit, cursor: query.cursor });
  }

  /**
   * Queues one delivery for an attempt now, whatever its status, with a fresh round of retries and
   * the same id (so the same `webhook-id`). A paused webhook's delivery waits for the resume.
   */
  async retry(companyId: CompanyId, webhookId: string, deliveryId: string): Promise<Stored<WebhookDelivery>> {
    const webhook = await this.webhooks.getStored(companyId, webhookId);
    const _id = parsePublicId(DELIVERY_ID_PREFIX, deliveryId);
    const delivery = _id && (await this.deliveries.requeueOne(companyId, { _id, webhookId: webhook._id }, new Date()));
    if (!delivery) throw new NotFoundException(`Delivery ${deliveryId} not found`);
    await this.queued(companyId, webhook._id);
    return delivery;
  }

  /** Queues again every failed delivery of the webhook created at or after `since`; answers how many. */
  async recover(companyId: CompanyId, webhookId: string, since: Date): Promise<number> {
    const webhook = await this.webhooks.getStored(companyId, webhookId);
    const requeued = await this.deliveries.requeue(
      companyId,
      { webhookId: webhook._id, status: 'failed', createdAt: { $gte: since } },
      new Date(),
    );
    if (requeued > 0) await this.queued(companyId, webhook._id);
    return requeued;
  }

  private async queued(companyId: CompanyId, webhookId: Types.ObjectId): Promise<void> {
    await this.webhookStore.markQueued(companyId, [webhookId], new Date());
    this.lanes.wake();
  }
}
