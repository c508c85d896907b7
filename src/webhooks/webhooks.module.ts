import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { LaneRunner } from './delivery/lane-runner.js';
import { WebhookDeliveryLanes } from './delivery/webhook-delivery-lanes.js';
import { WebhookSender } from './delivery/webhook-sender.js';
import { ExternalWebhooksController } from './external-webhooks.controller.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookDelivery, WebhookDeliverySchema } from './webhook-delivery.schema.js';
import { WebhookFanOut } from './webhook-fan-out.consumer.js';
import { WebhookSecretBox } from './webhook-secret-box.js';
import { WebhookSecretRotation } from './webhook-secret-rotation.js';
import { WebhookUrlPolicy } from './webhook-url.policy.js';
import { Webhook, WebhookSchema } from './webhook.schema.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks of both interfaces (one store), their deliveries (written by the event log's WebhookFanOut
 * consumer) and the lanes that deliver them. Other modules need nothing from here.
 */
@Module({
  imports: [
    MongooseModule.forFeature([
      { name: Webhook.name, schema: WebhookSchema },
      { name: WebhookDelivery.name, schema: WebhookDeliverySchema },
    ]),
  ],
  controllers: [WebhooksController, WebhookDeliveriesController, ExternalWebhooksController],
  providers: [
    WebhooksRepository,
    WebhookDeliveriesRepository,
    WebhookSecretBox,
    WebhookSecretRotation,
    WebhookUrlPolicy,
    WebhooksService,
    WebhookDeliveriesService,
    WebhookFanOut,
    WebhookSender,
    LaneRunner,
    WebhookDeliveryLanes,
  ],
})
export class WebhooksModule {}
