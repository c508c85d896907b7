import type { Stored } from '../../database/tenancy/tenant-repository.js';
import type { WebhookEventName } from '../webhook-events.js';
import { webhookPublicId } from '../webhook-ids.js';
import type { Webhook } from '../webhook.schema.js';
import { RetryConfigView } from './retry-config.dto.js';

/** A webhook in Interface B's list: exactly the specification's fields, without `retryConfig`. */
export class ExternalWebhookSummary {
  /** @example wh_6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "CRM sync" */
  name: string;
  /** @example https://hooks.example.com/parley */
  url: string;
  /** @example ["CHAT_RECEIVED","CHAT_SENT"] */
  events: WebhookEventName[];
  isActive: boolean;

  static from(webhook: Stored<Webhook>): ExternalWebhookSummary {
    return { id: webhookPublicId(webhook._id), name: webhook.name, url: webhook.url, events: webhook.events, isActive: webhook.isActive };
  }
}

/** One webhook on Interface B: with `retryConfig`. */
export class ExternalWebhookView {
  /** @example wh_6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "CRM sync" */
  name: string;
  /** @example https://hooks.example.com/parley */
  url: string;
  /** @example ["CHAT_RECEIVED","CHAT_SENT"] */
  events: WebhookEventName[];
  retryConfig: RetryConfigView;
  isActive: boolean;

  static from(webhook: Stored<Webhook>): ExternalWebhookView {
    const { id, name, url, events, isActive } = ExternalWebhookSummary.from(webhook);
    const retryConfig = { maxRetries: webhook.retryConfig.maxRetries, backoffMs: webhook.retryConfig.backoffMs };
    return { id, name, url, events, retryConfig, isActive };
  }
}

export class CreatedExternalWebhookView extends ExternalWebhookView {
  /**
   * The signing secret: shown only in this response
   * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
   */
  secret: string;
}
