import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import type { QueryFilter, Types } from 'mongoose';
import { AgentsRepository } from '../agents/agents.repository.js';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { parseObjectId, toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { causedBy } from '../events/event-cause.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import {
  CHANGE_ATTEMPTS,
  patched,
  queuedEvent,
  queueEntry,
  transferredEvent,
  stillMatches,
  updatedEvents,
  type Assignee,
  type AssignmentActor,
  type AssignOptions,
  type ConversationChanges,
  type EventOptions,
  type PlannedChange,
} from './conversation-changes.js';
import { assertAssignable, assertTransition } from './conversation-transitions.js';
import type { Conversation, Priority } from './conversation.schema.js';
import { ConversationView } from './conversation.view.js';
import { ConversationsRepository } from './conversations.repository.js';
import { ReadMarkersRepository } from './read-markers.repository.js';
import { wakeFields } from './snooze/snooze-changes.js';
import { mergeTags, normalizeTags } from '../tags/tags.js';
import { TeamsRepository } from '../teams/teams.repository.js';

export type { AssignOptions, Assignee, AssignmentActor, ConversationChanges, EventOptions } from './conversation-changes.js';

/**
 * The conversation rules. Status changes follow conversation-transitions.ts and are applied with
 * a filter on the status they were checked against, so of two concurrent changes only one applies:
 * the other answers 409 (re-read and retry), never a silently overwritten state. Events are
 * written here, with the change they describe, so every caller (API, flows, auto-assignment) emits
 * the same ones.
 */
@Injectable()
export class ConversationsService {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly agents: AgentsRepository,
    private readonly readMarkers: ReadMarkersRepository,
    private readonly clock: Clock,
    private readonly attributes: AttributeDefinitionsService,
    private readonly teams: TeamsRepository,
  ) {}

  /** The ids of a contact's conversations (none for a contact of another company). */
  async idsOfContact(companyId: CompanyId, contactId: string): Promise<Types.ObjectId[]> {
    const contact = parseObjectId(contactId);
    if (!contact) return [];
    const rows = await this.conversations.find(companyId, { contactId: contact }, { projection: { _id: 1 } });
    return rows.map((row) => row._id);
  }

  /** The conversation's id, for a read of something under it; 404 for a missing, malformed or foreign id. */
  async idOrThrow(companyId: CompanyId, id: string): Promise<Types.ObjectId> {
    const conversation = await this.conversations.findById(companyId, id, { _id: 1 });
    if (!conversation) throw this.notFound(id);
    return conversation._id;
  }

  /** Null for a missing, malformed or foreign id. */
  async find(companyId: CompanyId, id: string): Promise<ConversationView | null> {
    const conversation = await this.conversations.findById(companyId, id);
    return conversation ? ConversationView.from(conversation) : null;
  }

  /** 404 for a missing, malformed or foreign id. */
  async getOrThrow(companyId: CompanyId, id: string): Promise<ConversationView> {
    return ConversationView.from(await this.findStored(companyId, id));
  }

  /** The contact's open conversation on the channel, or null. */
  async findOpen(companyId: CompanyId, contactId: Types.ObjectId, channel: string): Promise<ConversationView | null> {
    const open = await this.conversations.findOpen(companyId, contactId, channel);
    return open ? ConversationView.from(open) : null;
  }

  /**
   * Assigns an active agent of the company: `bot|queued → human`, or a reassignment of a `human`
   * conversation (status unchanged). The same agent again is a no-op without an event. `eventId` names the
   * `conversation.assigned` event (a flow step gives one, so that a retried step is recognised); `transfer` (the
   * transfer route) writes `conversation.transferred` before it. Takes the conversation and the agent already read, or
   * their ids.
   */
  async assign(
    companyId: CompanyId,
    conversationOrId: string | Stored<Conversation>,
    agentOrId: string | Assignee,
    actor: AssignmentActor,
    options: AssignOptions & { transfer?: boolean } = {},
  ): Promise<ConversationView> {
    const current = await this.storedOf(companyId, conversationOrId);
    const id = current._id.toHexString();
    assertAssignable(current.status);
    const agent = typeof agentOrId === 'string' ? await this.agents.findById(companyId, agentOrId) : agentOrId;
    if (!agent) throw new RequestValidationException([{ field: 'agentId', message: 'agent not found' }]);
    if (!agent.isActive) {
      throw new RequestValidationException([
        { field: 'agentId', message: 'agent is deactivated and cannot be assigned conversations' },
      ]);
    }
    // Whether the new agent has read every inbound message so far: what its `mineUnread` count needs.
    const marker = await this.readMarkers.markerOf(companyId, agent._id, current._id);
    const updated = await this.change(companyId, current, (conversation) => {
      assertAssignable(conversation.status);
      if (options.fromStatus && conversation.status !== options.fromStatus) {
        throw new ConflictException(`Conversation ${id} is no longer ${options.fromStatus} (it is ${conversation.status})`);
      }
      if (conversation.status === 'human' && conversation.assignedAgentId?.equals(agent._id)) return null;
      const previousAgentId = conversation.assignedAgentId?.toHexString() ?? null;
      return {
        // Also on the current agent, so two concurrent reassignments cannot both report the same previous agent.
        expected: { status: conversation.status, assignedAgentId: conversation.assignedAgentId },
        set: {
          status: 'human',
          assignedAgentId: agent._id,
          assignedAt: new Date(),
          assignedBy: { kind: actor.kind, id: actor.id ? toObjectId(actor.id) : null },
          assigneeUnread: (conversation.inboundCount ?? 0) > (marker?.readCount ?? 0),
        },
        events: (after) => [
          ...(options.transfer ? [transferredEvent(after, conversation)] : []),
          stageEvent(
            'conversation.assigned',
            { conversation: ConversationView.from(after), agentId: agent._id.toHexString(), previousAgentId },
            { id: options.eventId, occurredAt: after.updatedAt },
          ),
        ],
      };
    }, options);
    // A person's (or a flow's) choice counts in the agent's load at once; routing counts its own as it reserves.
    if (actor.kind !== 'auto' && updated.assignedAgentId?.equals(agent._id)) {
      await this.agents.hold(companyId, agent._id, updated._id, updated.channel, this.clock.now());
    }
    return ConversationView.from(updated);
  }

  /** `bot → queued` (hand-off) or `human → queued` (unassign), with `conversation.queued`. */
  async handOff(companyId: CompanyId, id: string, options: EventOptions = {}): Promise<ConversationView> {
    return this.update(companyId, id, { status: 'queued' }, options);
  }

  /**
   * `bot|queued|human → closed`; the agent stays recorded, the contact's next message opens a new conversation. A
   * snooze ends with it, without a `conversation.unsnoozed`: `conversation.closed` says it all.
   */
  async close(companyId: CompanyId, conversationOrId: string | Stored<Conversation>, reason?: string, options: EventOptions = {}): Promise<ConversationView> {
    const updated = await this.change(companyId, await this.storedOf(companyId, conversationOrId), (conversation) => {
      assertTransition(conversation.status, 'closed');
      const closedAt = this.clock.now();
      return {
        expected: { status: conversation.status },
        // The Clock's time, as SLA deadlines are measured by it.
        set: { status: 'closed', isOpen: false, closedAt, closeReason: reason ?? null, ...wakeFields(conversation, closedAt) },
        events: (after) => [
          stageEvent(
            'conversation.closed',
            { conversation: ConversationView.from(after), reason: reason ?? null },
            { id: options.eventId, occurredAt: after.updatedAt },
          ),
        ],
      };
    }, options);
    return ConversationView.from(updated);
  }

  /**
   * Priority, tags (replaced) and subject may change in any status, closed included (labelling
   * after the fact); `status` only to `queued`, as a transition, with `conversation.queued` (which
   * auto-assignment reacts to, after this answers). A new priority emits `conversation.priority_changed` (SLA
   * policies match again on it). Nothing to change answers the conversation as it is.
   */
  async update(companyId: CompanyId, id: string, changes: ConversationChanges, options: EventOptions = {}): Promise<ConversationView> {
    const patch = await this.attributes.checkPatch(companyId, 'conversation', changes.attributes);
    const current = await this.findStored(companyId, id);
    const teamId = changes.teamId === undefined ? undefined : await this.teams.referencedId(companyId, changes.teamId);
    const updated = await this.change(companyId, current, (conversation) => {
      const set: Partial<Conversation> = {};
      if (changes.priority !== undefined) set.priority = changes.priority;
      if (changes.tags !== undefined) set.tags = normalizeTags(changes.tags);
      if (changes.subject !== undefined) set.subject = changes.subject;
      if (patch) set.attributes = patched(conversation.attributes, patch);
      if (changes.requiredSkills !== undefined) set.requiredSkills = [...new Set(changes.requiredSkills)];
      const teamMoved = teamId !== undefined && String(teamId) !== String(conversation.teamId ?? null);
      if (teamMoved) set.teamId = teamId;
      const priorityChanged = set.priority !== undefined && set.priority !== conversation.priority;
      const changeEvents = (after: Stored<Conversation>) => [
        ...(priorityChanged
          ? [stageEvent('conversation.priority_changed', { conversation: ConversationView.from(after), previousPriority: conversation.priority }, { occurredAt: after.updatedAt })]
          : []),
        ...(teamMoved ? [transferredEvent(after, conversation)] : []),
        ...updatedEvents(conversation, after, patch),
      ];
      if (changes.status === undefined) {
        if (Object.keys(set).length === 0) return null;
        // Pinned to the revision it read, so the priority (and team) it reports replaced is the one it replaced.
        return { expected: {}, set, events: changeEvents };
      }
      assertTransition(conversation.status, changes.status);
      return {
        expected: { status: conversation.status },
        set: { ...set, ...queueEntry() },
        events: (after) => [...changeEvents(after), queuedEvent(after, conversation, options)],
      };
    }, options);
    return ConversationView.from(updated);
  }

  async setPriority(companyId: CompanyId, id: string, priority: Priority, options: EventOptions = {}): Promise<ConversationView> {
    return this.update(companyId, id, { priority }, options);
  }

  /** Adds tags, keeping the ones the conversation has (no duplicates); 400 past MAX_TAGS in all. */
  async addTags(companyId: CompanyId, conversationOrId: string | Stored<Conversation>, tags: string[], options: EventOptions = {}): Promise<ConversationView> {
    const updated = await this.change(companyId, await this.storedOf(companyId, conversationOrId), (conversation) => {
      const merged = mergeTags(conversation.tags, tags);
      if (merged.length === conversation.tags.length) return null;
      return { expected: {}, set: { tags: merged }, events: (after) => updatedEvents(conversation, after, null) };
    }, options);
    return ConversationView.from(updated);
  }

  /** Removes tags (those it does not have are ignored). */
  async removeTags(companyId: CompanyId, conversationOrId: string | Stored<Conversation>, tags: string[], options: EventOptions = {}): Promise<ConversationView> {
    const removed = new Set(normalizeTags(tags));
    const updated = await this.change(companyId, await this.storedOf(companyId, conversationOrId), (conversation) => {
      const kept = conversation.tags.filter((tag) => !removed.has(tag));
      if (kept.length === conversation.tags.length) return null;
      return { expected: {}, set: { tags: kept }, events: (after) => updatedEvents(conversation, after, null) };
    }, options);
    return ConversationView.from(updated);
  }

  /**
   * Moves every open `human` conversation of the agent back to the queue (`human → queued`), as
   * when the agent is deactivated, one by one so that each gets its own queuedAt and
   * `conversation.queued`. One that changed meanwhile (closed, reassigned) is left as it is.
   * Answers how many moved.
   */
  async requeueAgentConversations(companyId: CompanyId, agentId: string): Promise<number> {
    const agent = parseObjectId(agentId);
    if (!agent) return 0;
    assertTransition('human', 'queued');
    const assigned = await this.conversations.find(companyId, { assignedAgentId: agent, status: 'human' }, { sort: { _id: 1 } });
    let moved = 0;
    for (const current of assigned) {
      const expected: QueryFilter<Conversation> = { assignedAgentId: agent, status: 'human' };
      try {
        await this.change(companyId, current, (conversation) =>
          conversation.status === 'human' && conversation.assignedAgentId?.equals(agent)
            ? { expected, set: queueEntry(), events: (after) => [queuedEvent(after, conversation)] }
            : null,
        );
        moved += 1;
      } catch (error) {
        if (!(error instanceof ConflictException || error instanceof NotFoundException)) throw error;
      }
    }
    return moved;
  }

  /** The stored record; 404 for a missing, malformed or foreign id. */
  async findStored(companyId: CompanyId, id: string): Promise<Stored<Conversation>> {
    const conversation = await this.conversations.findById(companyId, id);
    if (!conversation) throw this.notFound(id);
    return conversation;
  }

  /**
   * Applies what `plan` makes of the conversation (null: nothing to change), with its events, only if the
   * conversation is still at the revision `plan` saw. When it moved meanwhile, `plan` runs again on the new
   * state if the fields it relied on (`expected`) are unchanged (a message arrived); otherwise, or after
   * CHANGE_ATTEMPTS tries, it is a 409 (re-read and retry), never a silently overwritten state. Public for the rules
   * kept beside this class (snoozes, messages), which change conversations the same way. `options.cause` (a rule's
   * action) goes into every event of the change.
   */
  async change(
    companyId: CompanyId,
    first: Stored<Conversation>,
    plan: (conversation: Stored<Conversation>) => PlannedChange | null,
    options: EventOptions = {},
  ): Promise<Stored<Conversation>> {
    let current = first;
    for (let attempt = 1; ; attempt += 1) {
      const planned = plan(current);
      if (!planned) return current;
      const { cause } = options;
      const events = planned.events && cause ? (after: Stored<Conversation>) => planned.events!(after).map((event) => causedBy(event, cause)) : planned.events;
      const updated = await this.conversations.change(companyId, current, planned.expected, planned.set, events);
      if (updated) return updated;
      const now = await this.conversations.findById(companyId, current._id.toHexString());
      const id = current._id.toHexString();
      if (!now) throw this.notFound(id);
      if (!stillMatches(now, planned.expected) || attempt === CHANGE_ATTEMPTS) {
        throw new ConflictException(
          `Conversation ${id} was changed by another request (it is now ${now.status}); read it again and retry`,
        );
      }
      current = now;
    }
  }

  /**
   * The conversation given, or read by its id. A record read earlier may be stale: a change made from it fails its
   * conditional write and reads it again (`change`).
   */
  private async storedOf(companyId: CompanyId, conversationOrId: string | Stored<Conversation>): Promise<Stored<Conversation>> {
    return typeof conversationOrId === 'string' ? this.findStored(companyId, conversationOrId) : conversationOrId;
  }

  private notFound(id: string): NotFoundException {
    return new NotFoundException(`Conversation ${id} not found`);
  }
}
