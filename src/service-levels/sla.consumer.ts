import { Injectable } from '@nestjs/common';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { SlaRecompute } from './sla-recompute.js';
import { SLA_CONSUMER } from './sla-consumer.name.js';
import { SLA_EVENTS, SlaTracker } from './sla-tracker.js';

/**
 * SLA clocks as a consumer of the event log (SlaTracker). Nudged (no events) when the company's business hours or
 * time zone change: the deadlines that count business hours are computed again (SlaRecompute).
 */
@Injectable()
@ConsumesEvents({ name: SLA_CONSUMER, types: SLA_EVENTS, batchSize: 50 })
export class SlaConsumer implements EventHandler {
  constructor(
    private readonly tracker: SlaTracker,
    private readonly recompute: SlaRecompute,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    if (events.length === 0) return this.recompute.schedule(companyId);
    await this.tracker.apply(companyId, events);
  }
}
