import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { WebhookEventName } from './webhook-events.js';
import { webhookPublicId } from './webhook-ids.js';
import type { Webhook } from './webhook.schema.js';
import { RetryConfigView } from './dto/retry-config.dto.js';

/** A webhook on Interface A. */
export class WebhookView {
  /** @example wh_6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "CRM sync" */
  name: string;
  /** @example https://hooks.example.com/parley */
  url: string;
  /** @example ["message.received"] */
  events: WebhookEventName[];
  /**
   * Only events of conversations on these channels (events of no conversation too); null: every channel
   * @example ["whatsapp"]
   */
  channels: string[] | null;
  retryConfig: RetryConfigView;
  /** false: paused, nothing is attempted and new events are not recorded */
  isActive: boolean;
  /**
   * Set when delivery turned the webhook off (410 Gone)
   * @example null
   */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;

  static from(webhook: Stored<Webhook>): WebhookView {
    return {
      id: webhookPublicId(webhook._id),
      name: webhook.name,
      url: webhook.url,
      events: webhook.events,
      channels: webhook.channels?.length ? webhook.channels : null,
      retryConfig: { maxRetries: webhook.retryConfig.maxRetries, backoffMs: webhook.retryConfig.backoffMs },
      isActive: webhook.isActive,
      disabledReason: webhook.disabledReason ?? null,
      createdAt: webhook.createdAt.toISOString(),
      updatedAt: webhook.updatedAt.toISOString(),
    };
  }
}

export class CreatedWebhookView extends WebhookView {
  /**
   * The signing secret: shown only in this response
   * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
   */
  secret: string;
}

export class DeletedWebhookView {
  /** @example wh_6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example true */
  deleted: true;
}
