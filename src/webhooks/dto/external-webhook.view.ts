import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from '../webhook-events.js';
import { webhookPublicId } from '../webhook-ids.js';
import type { Webhook } from '../webhook.schema.js';
import { RetryConfigView } from './retry-config.dto.js';

/** A webhook in Interface B's list: exactly the specification's fields, without `retryConfig`. */
export class ExternalWebhookSummary {
  @ApiProperty({ example: 'wh_6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'CRM sync' }) name: string;
  @ApiProperty({ example: 'https://hooks.example.com/parley' }) url: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_NAMES, isArray: true, example: ['CHAT_RECEIVED', 'CHAT_SENT'] }) events: WebhookEventName[];
  @ApiProperty() isActive: boolean;

  static from(webhook: Stored<Webhook>): ExternalWebhookSummary {
    return { id: webhookPublicId(webhook._id), name: webhook.name, url: webhook.url, events: webhook.events, isActive: webhook.isActive };
  }
}

/** One webhook on Interface B: with `retryConfig`. */
export class ExternalWebhookView {
  @ApiProperty({ example: 'wh_6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'CRM sync' }) name: string;
  @ApiProperty({ example: 'https://hooks.example.com/parley' }) url: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_NAMES, isArray: true, example: ['CHAT_RECEIVED', 'CHAT_SENT'] }) events: WebhookEventName[];
  @ApiProperty({ type: RetryConfigView }) retryConfig: RetryConfigView;
  @ApiProperty() isActive: boolean;

  static from(webhook: Stored<Webhook>): ExternalWebhookView {
    const { id, name, url, events, isActive } = ExternalWebhookSummary.from(webhook);
    const retryConfig = { maxRetries: webhook.retryConfig.maxRetries, backoffMs: webhook.retryConfig.backoffMs };
    return { id, name, url, events, retryConfig, isActive };
  }
}

export class CreatedExternalWebhookView extends ExternalWebhookView {
  @ApiProperty({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'The signing secret: shown only in this response' })
  secret: string;
}
