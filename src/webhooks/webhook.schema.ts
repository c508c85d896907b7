import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from './webhook-events.js';

export const DEFAULT_RETRY_CONFIG = { maxRetries: 5, backoffMs: 1000 } as const;

/** The lease of a free lane: always a date, so the claim filter is a plain range. */
export const LANE_FREE = new Date(0);

@Schema({ _id: false })
export class WebhookRetryConfig {
  @Prop({ required: true, min: 0, max: 10 })
  maxRetries: number;

  @Prop({ required: true, min: 100, max: 3_600_000 })
  backoffMs: number;
}

/**
 * A webhook of either interface (one store). Besides what callers see, it carries the state of its
 * delivery lane: deliveries to one webhook are attempted one at a time and in order, by whichever
 * worker holds the lane's lease (see the README, "Webhooks").
 */
@Schema({ collection: 'webhooks', timestamps: true })
export class Webhook {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ required: true, maxlength: 2048 })
  url: string;

  /** The names as subscribed, dotted or Interface B form: deliveries use the same names. */
  @Prop({ type: [String], enum: WEBHOOK_EVENT_NAMES, required: true })
  events: WebhookEventName[];

  @Prop({ type: WebhookRetryConfig, required: true })
  retryConfig: WebhookRetryConfig;

  @Prop({ required: true, default: true })
  isActive: boolean;

  /** Why delivery turned the webhook off (a 410 Gone); null when it is active or paused by a caller. */
  @Prop({ type: String, default: null })
  disabledReason: string | null;

  /** The signing secret, encrypted (WebhookSecretBox). */
  @Prop({ required: true, select: false })
  secret: string;

  /** Numbers the deliveries of this webhook in event order. */
  @Prop({ required: true, default: 0 })
  deliverySequence: number;

  /**
   * Bumped after every change to the pending deliveries made outside the lane (a new event, a
   * redelivery, a resume), so a worker can tell that its view of the queue went stale.
   */
  @Prop({ required: true, default: 0 })
  queueVersion: number;

  /** No later than when the oldest pending delivery is due; absent when none is pending. */
  @Prop({ type: Date })
  nextDueAt?: Date;

  @Prop({ type: String, default: null })
  leaseOwner: string | null;

  @Prop({ type: Date, required: true, default: () => LANE_FREE })
  leaseUntil: Date;
}

export const WebhookSchema = SchemaFactory.createForClass(Webhook);
WebhookSchema.plugin(tenantScopePlugin);
WebhookSchema.index({ companyId: 1, _id: -1 });
// The outbox listener: the active webhooks of a company subscribed to either name of an event.
WebhookSchema.index({ companyId: 1, isActive: 1, events: 1 });
// The worker's claim: active webhooks whose lane is due (the lease is checked on the few it finds).
WebhookSchema.index({ isActive: 1, nextDueAt: 1 });
