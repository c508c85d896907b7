import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { LaneFields } from '../lanes/lane.schema.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from './webhook-events.js';
import { auditedPlugin } from '../audit/audited.js';

export const DEFAULT_RETRY_CONFIG = { maxRetries: 5, backoffMs: 1000 } as const;

@Schema({ _id: false })
export class WebhookRetryConfig {
  @Prop({ required: true, min: 0, max: 10 })
  maxRetries: number;

  @Prop({ required: true, min: 100, max: 3_600_000 })
  backoffMs: number;
}

/**
 * A webhook of either interface (one store). Besides what callers see, it is the lane of its deliveries
 * (LaneFields): they are attempted one at a time and in order, by whichever worker holds the lane's lease
 * (see docs/webhooks.md).
 */
@Schema({ collection: 'webhooks', timestamps: true })
export class Webhook extends LaneFields {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ required: true, maxlength: 2048 })
  url: string;

  /** The names as subscribed, dotted or Interface B form: deliveries use the same names. */
  @Prop({ type: [String], enum: WEBHOOK_EVENT_NAMES, required: true })
  events: WebhookEventName[];

  /** Only events of conversations on these channels (lower-cased); unset or null: every channel. */
  @Prop({ type: [String], default: undefined })
  channels?: string[] | null;

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

  /** Since when it receives events: its creation, or its last resume (events of a pause are not recorded for it). */
  @Prop({ type: Date, required: true, default: () => new Date() })
  activeSince: Date;
}

export const WebhookSchema = SchemaFactory.createForClass(Webhook);
WebhookSchema.plugin(tenantScopePlugin);
WebhookSchema.plugin(auditedPlugin);
WebhookSchema.plugin(removablePlugin);
WebhookSchema.index({ companyId: 1, _id: -1 });
// The fan-out: the active webhooks of a company subscribed to either name of an event.
WebhookSchema.index({ companyId: 1, isActive: 1, events: 1 });
// The worker's claim: active webhooks whose lane is due (the lease is checked on the few it finds).
WebhookSchema.index({ isActive: 1, nextDueAt: 1 });
