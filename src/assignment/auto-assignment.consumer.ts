import { Injectable } from '@nestjs/common';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import { EventConsumers } from '../events/consumers/event-consumers.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { AUTO_ASSIGNMENT } from './auto-assignment.name.js';
import { AutoAssigner } from './auto-assigner.js';


/**
 * Auto-assignment as a consumer of the event log: it serves the company's queue when a conversation enters it
 * (or wakes in it: a snoozed conversation is left in the queue until then), when closing one frees its agent, and when nudged (an agent came online, settings changed). Serving the queue
 * is safe to repeat: a conversation leaves the queue when it is assigned, and choices are made under the
 * company's assignment lease, so no agent goes over capacity.
 */
@Injectable()
@ConsumesEvents({ name: AUTO_ASSIGNMENT, types: ['conversation.queued', 'conversation.unsnoozed', 'conversation.closed'] })
export class AutoAssignmentConsumer implements EventHandler {
  constructor(
    private readonly consumers: EventConsumers,
    private readonly assigner: AutoAssigner,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    const nudged = events.length === 0;
    const queueMayMove = events.some(
      (event) =>
        event.type === 'conversation.queued' ||
        (event.type === 'conversation.unsnoozed' && event.data.conversation.status === 'queued') ||
        (event.type === 'conversation.closed' && event.data.conversation.assignedAgentId !== null),
    );
    if (nudged || queueMayMove) await this.assigner.serveQueue(companyId);
  }

  /** The queue may be served now (an agent gained room or came online, auto-assignment was turned on). */
  async nudge(companyId: CompanyId): Promise<void> {
    await this.consumers.nudge(AUTO_ASSIGNMENT, String(companyId));
  }
}
