import type { WebhookEventName } from './webhook-events.js';
import { RetryConfigView } from './dto/retry-config.dto.js';
import type { WebhookView } from './webhook.view.js';

/** A webhook in Interface B's list: the specification's fields without `retryConfig`, and the record's times. */
export class ExternalWebhookSummary {
  /** @example wh_6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "CRM sync" */
  name: string;
  /** @example https://hooks.example.com/parley */
  url: string;
  /** @example ["CHAT_RECEIVED","CHAT_SENT"] */
  events: WebhookEventName[];
  /** false: paused, nothing is attempted and new events are not recorded */
  isActive: boolean;
  /** Set when delivery turned the webhook off (410 Gone) */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;

  static from(webhook: WebhookView): ExternalWebhookSummary {
    const { id, name, url, events, isActive, disabledReason, createdAt, updatedAt } = webhook;
    return { id, name, url, events, isActive, disabledReason, createdAt, updatedAt };
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
  /** false: paused, nothing is attempted and new events are not recorded */
  isActive: boolean;
  /** Set when delivery turned the webhook off (410 Gone) */
  disabledReason: string | null;
  createdAt: string;
  updatedAt: string;

  static from(webhook: WebhookView): ExternalWebhookView {
    const { id, name, url, events, retryConfig, isActive, disabledReason, createdAt, updatedAt } = webhook;
    return { id, name, url, events, retryConfig, isActive, disabledReason, createdAt, updatedAt };
  }
}

export class CreatedExternalWebhookView extends ExternalWebhookView {
  /**
   * The signing secret: shown only in this response
   * @example whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw
   */
  secret: string;
}
