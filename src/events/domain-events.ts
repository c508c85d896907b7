import type { ContactView } from '../contacts/contact.view.js';
import type { AgentStatus, StatusChangeReason } from '../agents/agent.schema.js';
import type { AgentView } from '../agents/agent.view.js';
import type { AutomationRunView } from '../automation-rules/automation-run.view.js';
import type { Priority } from '../conversations/conversation.schema.js';
import type { UnsnoozeReason } from '../conversations/snooze/sleep.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import type { DeliveryStatus } from '../messages/message.schema.js';
import type { MessageView } from '../messages/message.view.js';
import type { PrivacyRequestView } from '../privacy/privacy-request.view.js';
import type { SlaMetric } from '../sla-policies/sla-metrics.js';
import type { TemplateStatus } from '../message-templates/message-template.schema.js';
import type { MessageTemplateView } from '../message-templates/message-template.view.js';

/**
 * The event catalogue: every domain event under its dotted (Interface A) name, with its Interface B name. Contract
 * section 6's events, plus `conversation.queued` (a hand-off or an unassignment: the conversation waits for an
 * agent), `message.status_changed` (an outbound message's delivery moved forward, contract section 12), and those of
 * the later sections (13-17): among them the service levels' (16), a priority changed (which may change the
 * conversation's SLA policy), an SLA deadline coming or missed, a satisfaction rating. A new event is added here, with
 * both names, and its data below: webhooks, the feed and streams take it from here.
 */
export const EVENT_CATALOGUE = {
  'conversation.created': 'CONVERSATION_CREATED',
  'conversation.assigned': 'CONVERSATION_ASSIGNED',
  'conversation.queued': 'CONVERSATION_QUEUED',
  'conversation.closed': 'CONVERSATION_CLOSED',
  'conversation.note_added': 'NOTE_ADDED',
  'conversation.snoozed': 'CONVERSATION_SNOOZED',
  'conversation.unsnoozed': 'CONVERSATION_UNSNOOZED',
  'conversation.priority_changed': 'CONVERSATION_PRIORITY_CHANGED',
  'conversation.reply_window_closing': 'REPLY_WINDOW_CLOSING',
  'message.received': 'CHAT_RECEIVED',
  'message.sent': 'CHAT_SENT',
  'message.status_changed': 'CHAT_STATUS_CHANGED',
  'flow.executed': 'FLOW_EXECUTED',
  'sla.warning': 'SLA_WARNING',
  'sla.breached': 'SLA_BREACHED',
  'csat.submitted': 'CSAT_SUBMITTED',
  'template.status_changed': 'TEMPLATE_STATUS_CHANGED',
  'contact.created': 'CONTACT_CREATED',
  'contact.updated': 'CONTACT_UPDATED',
  'contact.deleted': 'CONTACT_DELETED',
  'conversation.updated': 'CONVERSATION_UPDATED',
  'conversation.transferred': 'CONVERSATION_TRANSFERRED',
  'conversation.queue_timeout': 'CONVERSATION_QUEUE_TIMEOUT',
  'agent.status_changed': 'AGENT_STATUS_CHANGED',
  'contact.merged': 'CONTACT_MERGED',
  'contact.merge_undone': 'CONTACT_MERGE_UNDONE',
  'contact.erased': 'CONTACT_ERASED',
  'privacy_request.completed': 'PRIVACY_REQUEST_COMPLETED',
  'automation.applied': 'AUTOMATION_APPLIED',
} as const;
export type DomainEventName = keyof typeof EVENT_CATALOGUE;
/** Interface B's name of an event. */
export type ExternalEventName = (typeof EVENT_CATALOGUE)[DomainEventName];
export const DOMAIN_EVENTS = Object.keys(EVENT_CATALOGUE) as DomainEventName[];

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
  /** A private note (never sent to the contact); `mentions`: the ids of the agents it mentions. */
  'conversation.note_added': { message: MessageView; conversation: ConversationView; mentions: string[] };
  'conversation.snoozed': { conversation: ConversationView };
  'conversation.unsnoozed': { conversation: ConversationView; reason: UnsnoozeReason };
  'conversation.priority_changed': { conversation: ConversationView; previousPriority: Priority };
  /** `replyWindowWarningMinutes` before the reply window closes, once per window; `closesAt` is its end. */
  'conversation.reply_window_closing': { conversation: ConversationView; closesAt: string };
  'message.received': { message: MessageView; conversation: ConversationView };
  'message.sent': { message: MessageView; conversation: ConversationView };
  'message.status_changed': { message: MessageView; previousStatus: DeliveryStatus };
  'flow.executed': { execution: FlowExecutionSnapshot };
  /** A template's status as the channel decided it; `previousStatus` null when it was just created (`pending`). */
  'template.status_changed': { template: MessageTemplateView; previousStatus: TemplateStatus | null };
  /** An SLA target of the conversation falls due in `warnBeforeSeconds` (at `dueAt`) and is not met yet. */
  'sla.warning': SlaDeadlineEventData;
  /** An SLA target of the conversation was not met by `dueAt`. */
  'sla.breached': SlaDeadlineEventData;
  'csat.submitted': { conversation: ConversationView; rating: number; comment: string | null };
  'contact.created': { contact: ContactView };
  /** `changes`: each changed field (custom attributes as `attributes.<key>`) with its value before and after. */
  'contact.updated': { contact: ContactView; changes: FieldChanges };
  'contact.deleted': { contactId: string };
  /** Subject, tags, custom attributes, team or required skills changed (contract section 20); `changes` as above. */
  'conversation.updated': { conversation: ConversationView; changes: FieldChanges };
  /** Moved to a team's queue or to an agent (contract section 19): where it was and where it went. */
  'conversation.transferred': { conversation: ConversationView; from: QueuePlace; to: QueuePlace };
  /** Still waiting `maxWaitSeconds` after entering `teamId`'s queue: the team's overflow `action` applied, once per queue entry. */
  'conversation.queue_timeout': { conversation: ConversationView; teamId: string; action: 'team' | 'message' | 'close' };
  /** Every status change: by the agent itself, an admin, or idleness (`autoAssignment.awayAfterIdleSeconds`). */
  'agent.status_changed': { agent: AgentView; previousStatus: AgentStatus; reason: StatusChangeReason };
  /** Contacts `sourceIds` were merged into `contact` (as it is after the merge) by merge `mergeId` (contract section 22). */
  'contact.merged': { contact: ContactView; sourceIds: string[]; mergeId: string };
  /** Merge `mergeId` was undone: `sourceIds` are contacts again, and `contact` (the target) is as the undo left it. */
  'contact.merge_undone': { mergeId: string; contact: ContactView; sourceIds: string[] };
  /** The contact's personal data and message texts are gone (contract section 23): erase your copies. No personal data. */
  'contact.erased': { contactId: string; requestId: string };
  /** An export or an erasure finished (`status` completed or failed). */
  'privacy_request.completed': { request: PrivacyRequestView };
  /** A rule's run recorded (contract section 21): applied, failed (an action failed) or loop_stopped. */
  'automation.applied': { run: AutomationRunView; conversation: ConversationView };
}

/** A conversation's team and agent (each null when none). */
export interface QueuePlace {
  teamId: string | null;
  agentId: string | null;
}

/** `{ field: [before, after] }`, values as answered (null: none); a custom attribute's field is `attributes.<key>`. */
export type FieldChanges = Record<string, [unknown, unknown]>;

/** What `sla.warning` and `sla.breached` carry: which target of which policy, and when it is (was) due. */
export interface SlaDeadlineEventData {
  conversation: ConversationView;
  metric: SlaMetric;
  /** ISO-8601. */
  dueAt: string;
  policyId: string;
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
  /** The W3C traceparent of the request that caused it, when traced (never shown in deliveries or the feed). */
  trace?: string;
}

export type AnyDomainEvent = { [N in DomainEventName]: DomainEvent<N> }[DomainEventName];
