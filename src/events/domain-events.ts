import type { ConversationView } from '../conversations/conversation.view.js';
import type { MessageView } from '../messages/message.view.js';

/** The domain events of contract section 6, under their dotted (Interface A) names. */
export const DOMAIN_EVENTS = [
  'conversation.created',
  'conversation.assigned',
  'conversation.closed',
  'message.received',
  'message.sent',
  'flow.executed',
] as const;
export type DomainEventName = (typeof DOMAIN_EVENTS)[number];

export interface FlowExecutionStepResult {
  type: string;
  status: 'completed' | 'failed' | 'skipped';
  error?: string;
}

/** The result of one flow run (contract section 5), also the body of `POST /v1/flows/:id/execute`. */
export interface FlowExecutionSnapshot {
  executionId: string;
  flowId: string;
  conversationId: string;
  status: 'completed' | 'failed';
  steps: FlowExecutionStepResult[];
}

/** What each event carries: the ids, and snapshots of the records as stored after the change. */
export interface DomainEventData {
  'conversation.created': { conversation: ConversationView };
  'conversation.assigned': { conversation: ConversationView; agentId: string; previousAgentId: string | null };
  'conversation.closed': { conversation: ConversationView; reason: string | null };
  'message.received': { message: MessageView; conversation: ConversationView };
  'message.sent': { message: MessageView; conversation: ConversationView };
  'flow.executed': { execution: FlowExecutionSnapshot };
}

/** One occurrence of an event, as emitted on the bus and as delivered (under `data`) to webhooks. */
export interface DomainEvent<N extends DomainEventName = DomainEventName> {
  /** `evt_...`: the same for every webhook that receives this occurrence. */
  id: string;
  name: N;
  companyId: string;
  occurredAt: Date;
  data: DomainEventData[N];
}

export type AnyDomainEvent = { [N in DomainEventName]: DomainEvent<N> }[DomainEventName];

/**
 * Internal notifications between modules: published on the same bus with DomainEventBus.notify, never
 * delivered to webhooks (which subscribe to DOMAIN_EVENTS only).
 */
export interface InternalEventData {
  /** A conversation entered the queue (hand-off or unassignment): auto-assignment serves the queue. */
  'conversation.queued': { conversation: ConversationView };
}
export type InternalEventName = keyof InternalEventData;

export interface InternalEvent<N extends InternalEventName = InternalEventName> {
  name: N;
  companyId: string;
  data: InternalEventData[N];
}
