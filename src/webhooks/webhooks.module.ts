import { Module } from '@nestjs/common';
import { MongooseModule } from '@nestjs/mongoose';
import { LaneRunner } from './delivery/lane-runner.js';
import { WebhookDeliveryWorker } from './delivery/webhook-delivery.worker.js';
import { WebhookLanesRepository } from './delivery/webhook-lanes.repository.js';
import { WebhookSender } from './delivery/webhook-sender.js';
import { ExternalWebhooksController } from './external-webhooks.controller.js';
import { WebhookDeliveriesController } from './webhook-deliveries.controller.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookDeliveriesService } from './webhook-deliveries.service.js';
import { WebhookDelivery, WebhookDeliverySchema } from './webhook-delivery.schema.js';
import { WebhookOutboxListener } from './webhook-outbox.listener.js';
import { WebhookSecretBox } from './webhook-secret-box.js';
import { WebhookUrlPolicy } from './webhook-url.policy.js';
import { Webhook, WebhookSchema } from './webhook.schema.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksRepository } from './webhooks.repository.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhooks of both interfaces (one store), the outbox the domain events are written to, and the
 * worker that delivers it. Other modules need nothing from here: they publish on DomainEventBus.
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
    WebhookLanesRepository,
    WebhookSecretBox,
    WebhookUrlPolicy,
    WebhooksService,
    WebhookDeliveriesService,
    WebhookOutboxListener,
    WebhookSender,
    LaneRunner,
    WebhookDeliveryWorker,
  ],
})
export class WebhooksModule {}
