import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import type { DomainEvent, InternalEvent } from '../events/domain-events.js';
import { AutoAssigner } from './auto-assigner.js';

/** Serves the queue when a conversation enters it, and when closing a conversation frees an agent. */
@Injectable()
export class AutoAssignmentListener {
  constructor(private readonly assigner: AutoAssigner) {}

  @OnEvent('conversation.queued')
  async onQueued(event: InternalEvent<'conversation.queued'>): Promise<void> {
    await this.assigner.serveQueue(event.companyId);
  }

  @OnEvent('conversation.closed')
  async onClosed(event: DomainEvent<'conversation.closed'>): Promise<void> {
    if (event.data.conversation.assignedAgentId) await this.assigner.serveQueue(event.companyId);
  }
}
