import { OmitType } from '@nestjs/swagger';
import { WebhookView } from './webhook.view.js';

/**
 * A webhook in Interface B's list: the record without `retryConfig`, which the specification shows only on the
 * single webhook (the single webhook answers WebhookView, the same record as Interface A's).
 */
export class ExternalWebhookSummary extends OmitType(WebhookView, ['retryConfig'] as const) {
  static from(webhook: WebhookView): ExternalWebhookSummary {
    const { retryConfig: _retryConfig, ...summary } = webhook;
    return summary;
  }
}
