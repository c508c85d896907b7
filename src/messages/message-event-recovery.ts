import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { DomainEventBus } from '../events/domain-event-bus.js';
import type { Message } from './message.schema.js';
import { MessageView } from './message.view.js';
import { MessagesRepository } from './messages.repository.js';
import { messageEventName } from './messages.service.js';

/** An event still pending this long after its message was stored is taken for lost: requests publish within milliseconds. */
export const PENDING_EVENT_GRACE_MS = 30_000;
/** How often each process looks for lost events. */
const SWEEP_INTERVAL_MS = 5_000;

/**
 * Publishes the events of messages whose process died between storing the message and publishing
 * its event (webhook outbox, inbound flows): a standalone MongoDB has no transaction to make the two
 * one write, so each message carries its pending event until it is published. Delivery stays at least
 * once: an event published just before a crash may be published again, under the same event id, with
 * the conversation as it stands at recovery.
 */
@Injectable()
export class MessageEventRecovery implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(MessageEventRecovery.name);
  private timer?: NodeJS.Timeout;
  private sweeping: Promise<unknown> | null = null;

  constructor(
    private readonly messages: MessagesRepository,
    private readonly conversations: ConversationsService,
    private readonly events: DomainEventBus,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.sweeping ??= this.recover(new Date())
        .catch((error: unknown) => this.logger.error({ err: error }, 'Could not recover pending message events'))
        .finally(() => (this.sweeping = null));
    }, SWEEP_INTERVAL_MS).unref();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
  }

  /** Publishes every event pending since PENDING_EVENT_GRACE_MS before `now`; answers how many. */
  async recover(now: Date): Promise<number> {
    const staleBefore = new Date(now.getTime() - PENDING_EVENT_GRACE_MS);
    let recovered = 0;
    for (;;) {
      const message = await this.messages.claimStalePendingEvent(staleBefore, now);
      if (!message) return recovered;
      await this.publish(message);
      recovered += 1;
    }
  }

  private async publish(message: Stored<Message>): Promise<void> {
    const { companyId, pendingEvent } = message;
    const conversation = await this.conversations.find(companyId, message.conversationId.toHexString());
    // Claimed messages always carry their pending event; a conversation is never deleted through the API.
    if (conversation && pendingEvent) {
      const data = { message: MessageView.from(message), conversation };
      await this.events.publish(messageEventName(message.direction), String(companyId), data, { id: pendingEvent.id, occurredAt: message.createdAt });
    }
    await this.messages.clearPendingEvent(companyId, message._id);
  }
}
