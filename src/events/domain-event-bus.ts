import { Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { randomBytes } from 'node:crypto';
import type {
  DomainEvent,
  DomainEventData,
  DomainEventName,
  InternalEvent,
  InternalEventData,
  InternalEventName,
} from './domain-events.js';

export function newEventId(): string {
  return `evt_${randomBytes(16).toString('base64url')}`;
}

export interface EventOrigin {
  id: string;
  occurredAt: Date;
}

/**
 * Publishes domain events on the Nest event-emitter bus, after the change they describe is stored.
 * `publish` waits for every listener: the webhook outbox is written before the request that caused
 * the event answers. Listeners subscribe with `@OnEvent('conversation.created')` and friends.
 */
@Injectable()
export class DomainEventBus {
  constructor(private readonly emitter: EventEmitter2) {}

  /** `origin` gives the event's id and time when they were chosen before (an event published again keeps them). */
  async publish<N extends DomainEventName>(
    name: N,
    companyId: string,
    data: DomainEventData[N],
    origin: EventOrigin = { id: newEventId(), occurredAt: new Date() },
  ): Promise<DomainEvent<N>> {
    const event: DomainEvent<N> = { ...origin, name, companyId, data };
    await this.emitter.emitAsync(name, event);
    return event;
  }

  /** An internal notification (see InternalEventData): awaited like `publish`, never sent to webhooks. */
  async notify<N extends InternalEventName>(name: N, companyId: string, data: InternalEventData[N]): Promise<void> {
    const event: InternalEvent<N> = { name, companyId, data };
    await this.emitter.emitAsync(name, event);
  }
}
