import type { QueryFilter } from 'mongoose';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { EventCause } from '../events/event-cause.js';
import { stageEvent, type PendingEvent } from '../events/pending-event.schema.js';
import type { Conversation, ConversationStatus } from './conversation.schema.js';
import { ConversationView } from './conversation.view.js';

/** How ConversationsService computes a change: what it relies on, sets and emits (see its `change`). */

/** Options of a change that emits an event: its id, when it must be predictable (a retried flow step). */
export interface EventOptions {
  eventId?: string;
  /** An automation rule's action: every event of the change carries it in its data. */
  cause?: EventCause;
}

export interface AssignOptions extends EventOptions {
  /** Assign only a conversation still in this status (auto-assignment takes from the queue, never reassigns). */
  fromStatus?: ConversationStatus;
}

/** A change computed from a conversation: the fields it relied on, what it sets, and the events it emits. */
export interface PlannedChange {
  expected: QueryFilter<Conversation>;
  set: Partial<Conversation>;
  events?: (after: Stored<Conversation>) => PendingEvent[];
}

/** How many times a change is computed again when only fields it does not rely on moved under it. */
export const CHANGE_ATTEMPTS = 5;

/** What (re-)entering the queue sets: unassigned, waiting since now. */
export function queueEntry(): Partial<Conversation> {
  return { status: 'queued', queuedAt: new Date(), assignedAgentId: null, assignedAt: null, assignedBy: null };
}

export function queuedEvent(after: Stored<Conversation>, before: Stored<Conversation>, options: EventOptions = {}): PendingEvent {
  const previousAgentId = before.assignedAgentId?.toHexString() ?? null;
  return stageEvent('conversation.queued', { conversation: ConversationView.from(after), previousAgentId }, { id: options.eventId, occurredAt: after.updatedAt });
}

/** Whether `conversation` still has the values `expected` names (ids compared as strings). */
export function stillMatches(conversation: Stored<Conversation>, expected: QueryFilter<Conversation>): boolean {
  const record = conversation as unknown as Record<string, unknown>;
  return Object.entries(expected).every(([field, value]) => String(record[field] ?? null) === String(value ?? null));
}

/** `conversation.transferred` of a change that moved the conversation's team or agent. */
export function transferredEvent(after: Stored<Conversation>, before: Stored<Conversation>, options: EventOptions = {}): PendingEvent {
  const place = (conversation: Stored<Conversation>) => ({
    teamId: conversation.teamId?.toHexString() ?? null,
    agentId: conversation.assignedAgentId?.toHexString() ?? null,
  });
  return stageEvent(
    'conversation.transferred',
    { conversation: ConversationView.from(after), from: place(before), to: place(after) },
    { id: options.eventId, occurredAt: after.updatedAt },
  );
}
