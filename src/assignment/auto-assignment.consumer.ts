import { Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import { EventConsumers } from '../events/consumers/event-consumers.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { Clock } from '../lanes/clock.js';
import { AUTO_ASSIGNMENT } from './auto-assignment.name.js';
import { AutoAssigner } from './auto-assigner.js';
import { QueueTimeouts } from './queue-timeouts.js';

/**
 * Routing as a consumer of the event log (contract section 19). For each batch of a company's events, in log order,
 * it first keeps the agents' loads (a conversation assigned counts in its agent's, one closed, re-queued, reassigned
 * or transferred leaves its previous agent's: set operations keyed by conversation, so a replayed batch changes
 * nothing), sets the queue timers of conversations entering a team's queue, then serves the queues: any of these
 * events may let a waiting conversation go (queued, woken, moved, re-prioritised, room freed). A nudge (an agent came
 * online, joined a team, gained a skill or capacity; auto-assignment turned on) serves the queues alone.
 */
@Injectable()
@ConsumesEvents({
  name: AUTO_ASSIGNMENT,
  types: [
    'conversation.queued',
    'conversation.unsnoozed',
    'conversation.closed',
    'conversation.assigned',
    'conversation.transferred',
    'conversation.priority_changed',
    'conversation.queue_timeout',
  ],
})
export class AutoAssignmentConsumer implements EventHandler {
  constructor(
    private readonly consumers: EventConsumers,
    private readonly assigner: AutoAssigner,
    private readonly agents: AgentsRepository,
    private readonly queueTimeouts: QueueTimeouts,
    private readonly clock: Clock,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    for (const event of events) await this.keepLoad(companyId, event);
    for (const event of events) {
      const entered = event.type === 'conversation.queued' || event.type === 'conversation.transferred' || event.type === 'conversation.queue_timeout';
      if (entered) await this.queueTimeouts.entered(companyId, event.data.conversation);
    }
    if (events.length === 0 || events.some(mayLetOneGo)) await this.assigner.serveQueue(companyId);
  }

  /** The queue may be served now (an agent gained room or came online, auto-assignment was turned on). */
  async nudge(companyId: CompanyId): Promise<void> {
    await this.consumers.nudge(AUTO_ASSIGNMENT, String(companyId));
  }

  private async keepLoad(companyId: string, event: AnyDomainEvent): Promise<void> {
    if (!('conversation' in event.data)) return;
    const { conversation } = event.data;
    const id = new Types.ObjectId(conversation.id);
    const release = (agentId: string | null) => (agentId ? this.agents.release(companyId, new Types.ObjectId(agentId), id, conversation.channel) : null);
    const hold = (agentId: string | null) => (agentId ? this.agents.hold(companyId, new Types.ObjectId(agentId), id, conversation.channel, this.clock.now()) : null);
    switch (event.type) {
      case 'conversation.assigned':
        if (event.data.previousAgentId !== event.data.agentId) await release(event.data.previousAgentId);
        await hold(event.data.agentId);
        break;
      case 'conversation.queued':
        await release(event.data.previousAgentId);
        break;
      case 'conversation.closed':
        await release(conversation.assignedAgentId);
        break;
      case 'conversation.transferred':
        if (event.data.from.agentId !== event.data.to.agentId) await release(event.data.from.agentId);
        if (conversation.status === 'human') await hold(event.data.to.agentId);
        break;
      default:
        break;
    }
  }
}

/** Whether the event may let a waiting conversation go: one entered or moved in a queue, or an agent gained room. */
function mayLetOneGo(event: AnyDomainEvent): boolean {
  switch (event.type) {
    case 'conversation.assigned':
      return event.data.previousAgentId !== null;
    case 'conversation.closed':
      return event.data.conversation.assignedAgentId !== null;
    case 'conversation.unsnoozed':
    case 'conversation.priority_changed':
      return event.data.conversation.status === 'queued';
    default:
      return true;
  }
}
