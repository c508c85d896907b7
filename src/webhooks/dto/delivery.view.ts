import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { DELIVERY_STATUSES, type DeliveryAttempt, type DeliveryStatus, type WebhookDelivery } from '../webhook-delivery.schema.js';
import { deliveryPublicId, webhookPublicId } from '../webhook-ids.js';

export class DeliveryAttemptView {
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: Number, nullable: true, example: 503, description: 'null when no answer came' }) statusCode: number | null;
  @ApiProperty({ example: 182 }) durationMs: number;
  @ApiProperty({ type: String, nullable: true, example: 'HTTP 503: upstream busy' }) error: string | null;

  static from(attempt: DeliveryAttempt): DeliveryAttemptView {
    return { at: attempt.at.toISOString(), statusCode: attempt.statusCode ?? null, durationMs: attempt.durationMs, error: attempt.error ?? null };
  }
}

/** One event for one webhook and its attempts (the latest 50). */
export class DeliveryView {
  @ApiProperty({ example: 'dlv_6650f0c2a1b2c3d4e5f60799', description: 'Also the webhook-id header of every attempt' }) id: string;
  @ApiProperty({ example: 'wh_6650f0c2a1b2c3d4e5f60718' }) webhookId: string;
  @ApiProperty({ example: 'evt_3q2Zr4mB8Cq0v7n1LkH0aQ' }) eventId: string;
  @ApiProperty({ example: 'message.received', description: 'The event name as the webhook subscribed to it' }) type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES }) status: DeliveryStatus;
  @ApiProperty({ example: 2, description: 'Attempts since it was last queued' }) attemptCount: number;
  @ApiProperty({ type: [DeliveryAttemptView] }) attempts: DeliveryAttemptView[];
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Set while pending' }) nextAttemptAt: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) completedAt: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

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
