import { Injectable } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { DomainEvent } from '../events/domain-events.js';
import { FlowRunner } from './flow-runner.js';
import { FlowsRepository } from './flows.repository.js';
import { matchesTrigger } from './keyword-match.js';

/** The inbound-triggered flows considered per message, and the most that run for one message. */
const CANDIDATE_FLOWS = 100;
const MAX_FLOWS_PER_MESSAGE = 10;

/**
 * Runs the company's active `inbound_message` flows when a contact writes into a conversation the
 * bot handles: each flow without keywords, or whose keywords match (see keyword-match.ts), oldest
 * flow first, until a flow moves the conversation out of `bot` (a hand-off, an assignment, a close).
 * Loops are cut twice: flows only send outbound messages, which trigger nothing, and a message
 * caused by a flow run on the same conversation (in the same call chain) triggers no flow.
 */
@Injectable()
export class InboundFlowTrigger {
  constructor(
    private readonly flows: FlowsRepository,
    private readonly conversations: ConversationsService,
    private readonly runner: FlowRunner,
  ) {}

  @OnEvent('message.received')
  async onMessageReceived(event: DomainEvent<'message.received'>): Promise<void> {
    const { message, conversation } = event.data;
    if (message.direction !== 'inbound' || conversation.status !== 'bot') return;
    const flows = await this.flows.findInboundTriggered(event.companyId, CANDIDATE_FLOWS);
    let ran = 0;
    for (const flow of flows) {
      if (ran === MAX_FLOWS_PER_MESSAGE) return;
      if (!matchesTrigger(message.text, flow.trigger.keywords)) continue;
      if (ran > 0 && (await this.conversations.find(event.companyId, conversation.id))?.status !== 'bot') return;
      await this.runner.run(event.companyId, flow, conversation.id, 'inbound_message');
      ran += 1;
    }
  }
}
