import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

@Schema({ _id: false })
export class DeliveryAttempt {
  @Prop({ required: true })
  at: Date;

  /** The receiver's HTTP status; null when no answer came (timeout, refused, network error). */
  @Prop({ type: Number, default: null })
  statusCode: number | null;

  @Prop({ required: true })
  durationMs: number;

  @Prop({ type: String, default: null })
  error: string | null;
}
const DeliveryAttemptSchema = SchemaFactory.createForClass(DeliveryAttempt);

/**
 * One event for one webhook (unique on the pair, so an event fanned out again keeps its delivery and its
 * `webhook-id`), written by the fan-out consumer of the event log, and the log of every attempt to deliver it.
 * Its id is the `webhook-id` header.
 */
@Schema({ collection: 'webhook_deliveries', timestamps: true })
export class WebhookDelivery {
  // SchemaTypes.ObjectId, not Types.ObjectId (which Mongoose 9 takes for Mixed): filters get cast.
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  webhookId: Types.ObjectId;

  /** The event's `evt_...` id, the same for every webhook that receives it. */
  @Prop({ required: true })
  eventId: string;

  /** The event name as the webhook subscribed to it. */
  @Prop({ required: true })
  type: string;

  /** The body, serialized once: every attempt sends (and signs) these exact bytes. */
  /** The traceparent of the event's request, when traced: each attempt's span continues that trace. */
  @Prop({ type: String })
  trace?: string;

  @Prop({ required: true })
  payload: string;

  /** The event's sequence in the company's log: the lane attempts the lowest pending one first. */
  @Prop({ required: true })
  sequence: number;

  @Prop({ type: String, enum: DELIVERY_STATUSES, required: true, default: 'pending' })
  status: DeliveryStatus;

  /** Attempts since the delivery was last queued; a redelivery starts a new round of retries. */
  @Prop({ required: true, default: 0 })
  attemptCount: number;

  @Prop({ type: [DeliveryAttemptSchema], default: [] })
  attempts: DeliveryAttempt[];

  /** When the next attempt is due; null once succeeded or failed. */
  @Prop({ type: Date, default: null })
  nextAttemptAt: Date | null;

  @Prop({ type: Date, default: null })
  completedAt: Date | null;

  /** When the TTL monitor removes a finished delivery (WEBHOOK_DELIVERY_RETENTION_DAYS after it finished); unset while pending. */
  @Prop({ type: Date })
  expireAt?: Date;
}

export const WebhookDeliverySchema = SchemaFactory.createForClass(WebhookDelivery);
WebhookDeliverySchema.plugin(tenantScopePlugin);
// The delivery log, newest first.
WebhookDeliverySchema.index({ companyId: 1, webhookId: 1, _id: -1 });
// The log filtered by status, and the lane's head: the lowest pending sequence.
WebhookDeliverySchema.index({ companyId: 1, webhookId: 1, status: 1, _id: -1 });
WebhookDeliverySchema.index({ companyId: 1, webhookId: 1, status: 1, sequence: 1 });
// Recover: the failed deliveries created since a time.
WebhookDeliverySchema.index({ companyId: 1, webhookId: 1, status: 1, createdAt: 1 });
// One delivery per webhook and event, whatever fans the event out again.
WebhookDeliverySchema.index({ companyId: 1, webhookId: 1, eventId: 1 }, { unique: true });
WebhookDeliverySchema.index({ expireAt: 1 }, { expireAfterSeconds: 0, sparse: true });
