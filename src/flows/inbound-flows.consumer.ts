import { Injectable } from '@nestjs/common';
import { AutoReplies } from '../auto-replies/auto-replies.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import { byConversation, eachConversation } from '../events/consumers/conversation-batches.js';
import type { AnyDomainEvent, DomainEvent } from '../events/domain-events.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Flow } from './flow.schema.js';
import { FlowExecutionsRepository } from './flow-executions.repository.js';
import { FlowRunner, triggerKeyOf } from './flow-runner.js';
import { FlowTriggerMatcher } from './flow-trigger-matcher.js';
import { InboundFlows } from './inbound-flows.js';
import { scanText } from './keyword-match.js';

/** The most flows one inbound message runs. */
export const MAX_FLOWS_PER_MESSAGE = 10;

/**
 * What a contact's message sets off, as a consumer of the event log: its auto-replies (welcome, out of hours), then
 * the inbound-message flows. On `message.received` in a conversation the bot handles,
 * the company's active `inbound_message` flows run, oldest first, each without keywords or whose keywords match
 * (keyword-match.ts), until a flow moves the conversation out of `bot` (a hand-off, an assignment, a close). Each
 * flow runs once per message: a message handled again (after a crash) resumes the runs it had started and starts
 * the others as before. Flows send only outbound messages, which trigger nothing, so runs cannot loop. The
 * auto-replies go first, so that the contact reads them before a flow's answer; each is sent once (AutoReplies).
 */
@Injectable()
@ConsumesEvents({ name: 'inbound-flows', types: ['message.received'], batchSize: 50 })
export class InboundFlowsConsumer implements EventHandler {
  constructor(
    private readonly flows: InboundFlows,
    private readonly executions: FlowExecutionsRepository,
    private readonly conversations: ConversationsService,
    private readonly runner: FlowRunner,
    private readonly matcher: FlowTriggerMatcher,
    private readonly autoReplies: AutoReplies,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    const received = events.filter((event): event is DomainEvent<'message.received'> => event.type === 'message.received');
    if (received.length === 0) return;
    const flows = await this.flows.of(companyId);
    // Conversations are independent: their messages are answered side by side, each one's in log order.
    await eachConversation(byConversation(received, (event) => event.data.conversation.id), async (_id, messages) => {
      for (const event of messages) {
        await this.autoReplies.replyTo(companyId, event);
        if (flows.length > 0) await this.runFlows(companyId, flows, event);
      }
    });
  }

  private async runFlows(companyId: string, flows: Stored<Flow>[], event: DomainEvent<'message.received'>): Promise<void> {
    const { message, conversation } = event.data;
    const started = new Map(
      (await this.executions.forTriggerKeys(companyId, flows.map((flow) => triggerKeyOf(flow._id, event.id)))).map((execution) => [
        execution.flowId.toHexString(),
        execution,
      ]),
    );
    const triggered = this.matcher.triggered(companyId, flows, message.text === null ? null : scanText(message.text));
    let ran = 0;
    for (const flow of flows) {
      const previous = started.get(flow._id.toHexString());
      if (previous) {
        await this.runner.resume(companyId, flow, previous, true);
        ran += 1;
        continue;
      }
      if (ran === MAX_FLOWS_PER_MESSAGE) return;
      if (!triggered.has(flow)) continue;
      if ((await this.conversations.find(companyId, conversation.id))?.status !== 'bot') return;
      await this.runner.runTriggered(companyId, flow, conversation.id, event);
      ran += 1;
    }
  }
}
