import { Injectable } from '@nestjs/common';
import type { DomainEvent, DomainEventData, DomainEventName } from './domain-events.js';
import { EventLogRepository } from './event-log.repository.js';
import { EventRelay } from './event-relay.js';
import { stageEvent } from './pending-event.schema.js';

/**
 * Logs an event that no stored change carries (a deadline a durable timer reached, an extension's own signal, a
 * test's synthetic event). Changes of the product's records never come here: they are written with their events
 * (EventSourceRepository).
 */
@Injectable()
export class EventPublisher {
  constructor(
    private readonly relay: EventRelay,
    private readonly log: EventLogRepository,
  ) {}

  /**
   * Resolves with the event as logged (its id and sequence included). Given an `id`, publishing again (a retried
   * timer) logs nothing new and resolves with the event logged first.
   */
  async publish<N extends DomainEventName>(
    companyId: string,
    type: N,
    data: DomainEventData[N],
    options: { id?: string; occurredAt?: Date } = {},
  ): Promise<DomainEvent<N>> {
    const event = stageEvent(type, data, options);
    await this.relay.relay(companyId, [{ source: null, docId: null, events: [event] }]);
    const [logged] = await this.log.byIds(companyId, [event.id]);
    return logged as DomainEvent<N>;
  }
}
