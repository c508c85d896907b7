import { applyDecorators, Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { DOMAIN_EVENTS, type AnyDomainEvent } from '../events/domain-events.js';
import { serializeEvent } from './delivery/event-payload.js';
import { WebhookDeliveryWorker } from './delivery/webhook-delivery.worker.js';
import type { WebhookDelivery } from './webhook-delivery.schema.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { eventNamesOf, subscribedNameFor } from './webhook-events.js';
import { WebhooksRepository } from './webhooks.repository.js';

/**
 * Registered as a plain listener (no `async`, no `promisify`), eventemitter2 calls the handler
 * directly and `emitAsync` awaits the promise it returns, so `DomainEventBus.publish` resolves
 * only once the deliveries are stored. `suppressErrors: false`: if they cannot be stored, the
 * request that caused the event fails rather than lose it quietly.
 */
const LISTENER_OPTIONS = { async: false, promisify: false, suppressErrors: false };
const OnEveryDomainEvent = () => applyDecorators(...DOMAIN_EVENTS.map((name) => OnEvent(name, LISTENER_OPTIONS)));

/** Writes one delivery per active subscribed webhook into the outbox: no HTTP here. */
@Injectable()
export class WebhookOutboxListener {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly worker: WebhookDeliveryWorker,
  ) {}

  @OnEveryDomainEvent()
  async record(event: AnyDomainEvent): Promise<void> {
    const subscribers = await this.webhooks.subscribers(event.companyId, eventNamesOf(event.name));
    if (subscribers.length === 0) return;
    const now = new Date();
    const rows = await Promise.all(
      subscribers.map(async (webhook): Promise<Partial<WebhookDelivery> | null> => {
        // The name first: a webhook not subscribed to this event takes no sequence number.
        const type = subscribedNameFor(webhook.events, event.name);
        if (!type) return null;
        const sequence = await this.webhooks.nextSequence(event.companyId, webhook._id);
        if (sequence === null) return null;
        return { webhookId: webhook._id, eventId: event.id, type, payload: serializeEvent(event, type), sequence, status: 'pending', nextAttemptAt: now };
      }),
    );
    const deliveries = rows.filter((row) => row !== null);
    if (deliveries.length === 0) return;
    await this.deliveries.insertMany(event.companyId, deliveries);
    await this.webhooks.markQueued(event.companyId, deliveries.map((delivery) => delivery.webhookId!), now);
    this.worker.wake();
  }
}
