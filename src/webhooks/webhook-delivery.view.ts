import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { DeliveryAttempt, DeliveryStatus, WebhookDelivery } from './webhook-delivery.schema.js';
import { deliveryPublicId, webhookPublicId } from './webhook-ids.js';

export class DeliveryAttemptView {
  @ApiProperty({ format: 'date-time' }) at: string;
  /**
   * null when no answer came
   * @example 503
   */
  statusCode: number | null;
  /** @example 182 */
  durationMs: number;
  /** @example "HTTP 503: upstream busy" */
  error: string | null;

  static from(attempt: DeliveryAttempt): DeliveryAttemptView {
    return { at: attempt.at.toISOString(), statusCode: attempt.statusCode ?? null, durationMs: attempt.durationMs, error: attempt.error ?? null };
  }
}

/** One event for one webhook and its attempts (the latest 50). */
export class DeliveryView {
  /**
   * Also the webhook-id header of every attempt
   * @example dlv_6650f0c2a1b2c3d4e5f60799
   */
  id: string;
  /** @example wh_6650f0c2a1b2c3d4e5f60718 */
  webhookId: string;
  /** @example evt_3q2Zr4mB8Cq0v7n1LkH0aQ */
  eventId: string;
  /**
   * The event name as the webhook subscribed to it
   * @example message.received
   */
  type: string;
  status: DeliveryStatus;
  /**
   * Attempts since it was last queued
   * @example 2
   */
  attemptCount: number;
  attempts: DeliveryAttemptView[];
  /** Set while pending */
  nextAttemptAt: string | null;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;

  static from(delivery: Stored<WebhookDelivery>): DeliveryView {
    return {
      id: deliveryPublicId(delivery._id),
      webhookId: webhookPublicId(delivery.webhookId),
      eventId: delivery.eventId,
      type: delivery.type,
      status: delivery.status,
      attemptCount: delivery.attemptCount,
      attempts: delivery.attempts.map((attempt) => DeliveryAttemptView.from(attempt)),
      nextAttemptAt: delivery.nextAttemptAt?.toISOString() ?? null,
      completedAt: delivery.completedAt?.toISOString() ?? null,
      createdAt: delivery.createdAt.toISOString(),
      updatedAt: delivery.updatedAt.toISOString(),
    };
  }
}
