import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from '../webhook-events.js';
import { webhookPublicId } from '../webhook-ids.js';
import type { Webhook } from '../webhook.schema.js';
import { RetryConfigView } from './retry-config.dto.js';

/** A webhook on Interface A. */
export class WebhookView {
  @ApiProperty({ example: 'wh_6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'CRM sync' }) name: string;
  @ApiProperty({ example: 'https://hooks.example.com/parley' }) url: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_NAMES, isArray: true, example: ['message.received'] }) events: WebhookEventName[];
  @ApiProperty({ type: RetryConfigView }) retryConfig: RetryConfigView;
  @ApiProperty({ description: 'false: paused, nothing is attempted and new events are not recorded' }) isActive: boolean;
  @ApiProperty({ type: String, nullable: true, example: null, description: 'Set when delivery turned the webhook off (410 Gone)' })
  disabledReason: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(webhook: Stored<Webhook>): WebhookView {
    return {
      id: webhookPublicId(webhook._id),
      name: webhook.name,
      url: webhook.url,
      events: webhook.events,
      retryConfig: { maxRetries: webhook.retryConfig.maxRetries, backoffMs: webhook.retryConfig.backoffMs },
      isActive: webhook.isActive,
      disabledReason: webhook.disabledReason ?? null,
      createdAt: webhook.createdAt.toISOString(),
      updatedAt: webhook.updatedAt.toISOString(),
    };
  }
}

export class CreatedWebhookView extends WebhookView {
  @ApiPropertyOptional({ example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', description: 'The signing secret: shown only in this response' })
  secret: string;
}

export class DeletedWebhookView {
  @ApiProperty({ example: 'wh_6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: true }) deleted: true;
}
