import type { ConversationView } from '../conversations/conversation.view.js';
import type { DeliveryStatus } from '../messages/message.schema.js';
import type { MessageView } from '../messages/message.view.js';

/**
 * The domain events of contract section 6, under their dotted (Interface A) names, `conversation.queued`
 * (a hand-off or an unassignment: the conversation waits for an agent) and `message.status_changed` (an
 * outbound message's delivery moved forward, contract section 12).
 */
export const DOMAIN_EVENTS = [
  'conversation.created',
  'conversation.assigned',
  'conversation.queued',
  'conversation.closed',
  'message.received',
  'message.sent',
  'message.status_changed',
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
  'conversation.queued': { conversation: ConversationView; previousAgentId: string | null };
  'conversation.closed': { conversation: ConversationView; reason: string | null };
  'message.received': { message: MessageView; conversation: ConversationView };
  'message.sent': { message: MessageView; conversation: ConversationView };
  'message.status_changed': { message: MessageView; previousStatus: DeliveryStatus };
  'flow.executed': { execution: FlowExecutionSnapshot };
}

/** One event as the log holds it, and as consumers and the feed read it (`data` is what a webhook delivery carries). */
export interface DomainEvent<N extends DomainEventName = DomainEventName> {
  /** `evt_...`: the same for every consumer, webhook and feed reader of this occurrence. */
  id: string;
  type: N;
  companyId: string;
  /** Increases strictly per company in the order the events were logged. */
  sequence: number;
  occurredAt: Date;
  /**
   * The channel of the conversation the event is about (null: none known), so that channel-scoped webhooks and
   * readers are served without reading the conversation. Not part of what deliveries and the feed show.
   */
  channel: string | null;
  data: DomainEventData[N];
}

export type AnyDomainEvent = { [N in DomainEventName]: DomainEvent<N> }[DomainEventName];
