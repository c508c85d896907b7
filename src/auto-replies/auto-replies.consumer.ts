import { Injectable } from '@nestjs/common';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { AutoReplies } from './auto-replies.js';

/**
 * Auto-replies as a consumer of the event log. The inbound flows consumer sends them too, before a message's flows
 * run, so that the welcome comes before a flow's answer; each is sent once whichever comes first (AutoReplies).
 */
@Injectable()
@ConsumesEvents({ name: 'auto-replies', types: ['message.received'], batchSize: 20 })
export class AutoRepliesConsumer implements EventHandler {
  constructor(private readonly autoReplies: AutoReplies) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    for (const event of events) {
      if (event.type === 'message.received') await this.autoReplies.replyTo(companyId, event);
    }
  }
}
