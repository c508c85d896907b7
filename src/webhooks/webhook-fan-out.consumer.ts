import { Injectable } from '@nestjs/common';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import { DOMAIN_EVENTS, type AnyDomainEvent } from '../events/domain-events.js';
import { eventInScope } from '../events/event-channel.js';
import { serializeEvent } from './delivery/event-payload.js';
import { WebhookDeliveryLanes } from './delivery/webhook-delivery-lanes.js';
import { WebhookDeliveriesRepository, type NewDelivery } from './webhook-deliveries.repository.js';
import { eventNamesOf, subscribedNameFor } from './webhook-events.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * The event log's webhook consumer: for each event, one delivery per active webhook subscribed to it (and
 * active since before it occurred, and limited to none or to the channel of the event's conversation). A delivery is unique per webhook and event, so handling events again after
 * a crash keeps each delivery and its `webhook-id`; the lanes are told in every case, so deliveries written
 * just before a crash are never left unclaimed.
 */
@Injectable()
@ConsumesEvents({ name: 'webhooks', types: DOMAIN_EVENTS, batchSize: 200 })
export class WebhookFanOut implements EventHandler {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly lanes: WebhookDeliveryLanes,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    if (events.length === 0) return;
    const names = [...new Set(events.map((event) => event.type))].flatMap(eventNamesOf);
    const subscribers = await this.webhooks.subscribers(companyId, names);
    if (subscribers.length === 0) return;
    const now = new Date();
    const rows: NewDelivery[] = [];
    for (const event of events) {
      // One body per name the event goes out under, shared by the webhooks subscribed with that name.
      const payloads = new Map<string, string>();
      for (const webhook of subscribers) {
        // Events before its creation or resume are not for it (a paused webhook is not among the subscribers).
        if (webhook.activeSince && webhook.activeSince > event.occurredAt) continue;
        if (!eventInScope(webhook.channels ?? null, event.channel)) continue;
        const type = subscribedNameFor(webhook.events, event.type);
        if (!type) continue;
        const payload = payloads.get(type) ?? serializeEvent(event, type);
        payloads.set(type, payload);
        rows.push({
          webhookId: webhook._id,
          eventId: event.id,
          type,
          payload,
          sequence: event.sequence,
          nextAttemptAt: now,
          ...(event.trace ? { trace: event.trace } : {}),
        });
      }
    }
    if (rows.length === 0) return;
    await this.deliveries.insertNew(companyId, rows);
    const webhookIds = [...new Map(rows.map((row) => [String(row.webhookId), row.webhookId])).values()];
    await this.webhooks.markQueued(companyId, webhookIds, now);
    this.lanes.wake();
  }
}
