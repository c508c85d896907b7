import type { QueryFilter } from 'mongoose';
import type { Agent } from '../agents/agent.schema.js';
import { attributeChanges, type AttributePatch } from '../attributes/attribute-values.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { FieldChanges } from '../events/domain-events.js';
import type { EventCause } from '../events/event-cause.js';
import { stageEvent, type PendingEvent } from '../events/pending-event.schema.js';
import type { AssignerKind, Conversation, ConversationStatus, Priority } from './conversation.schema.js';
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

/** An agent as `assign` needs it: routing passes the one whose room it just reserved (active, read in that write). */
export type Assignee = Pick<Stored<Agent>, '_id' | 'isActive'>;

/** Who assigns: an agent through the API, a flow step, or automatic assignment (id null). */
export interface AssignmentActor {
  kind: AssignerKind;
  id: string | null;
}

export interface ConversationChanges {
  priority?: Priority;
  tags?: string[];
  subject?: string | null;
  status?: 'queued';
  /** Merged; null removes a key (checked against the company's conversation attribute definitions). */
  attributes?: Record<string, unknown>;
  /** A team of the company, or null for the company queue: a move between queues, with `conversation.transferred`. */
  teamId?: string | null;
  requiredSkills?: string[];
}

/** The attributes after `patch`. */
export function patched(attributes: Record<string, unknown> | null | undefined, patch: AttributePatch): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...(attributes ?? {}), ...patch.set };
  for (const key of patch.unset) delete merged[key];
  return merged;
}

/** `conversation.updated` when subject, tags or attributes changed (none otherwise). */
export function updatedEvents(before: Stored<Conversation>, after: Stored<Conversation>, patch: AttributePatch | null): PendingEvent[] {
  const changes: FieldChanges = {};
  if ((before.subject ?? null) !== (after.subject ?? null)) changes.subject = [before.subject ?? null, after.subject ?? null];
  if (JSON.stringify(before.tags ?? []) !== JSON.stringify(after.tags ?? [])) changes.tags = [before.tags ?? [], after.tags ?? []];
  if (String(before.teamId ?? null) !== String(after.teamId ?? null)) changes.teamId = [before.teamId ? String(before.teamId) : null, after.teamId ? String(after.teamId) : null];
  if (JSON.stringify(before.requiredSkills ?? []) !== JSON.stringify(after.requiredSkills ?? [])) changes.requiredSkills = [before.requiredSkills ?? [], after.requiredSkills ?? []];
  if (patch) Object.assign(changes, attributeChanges(before.attributes, patch));
  if (Object.keys(changes).length === 0) return [];
  return [stageEvent('conversation.updated', { conversation: ConversationView.from(after), changes }, { occurredAt: after.updatedAt })];
}
