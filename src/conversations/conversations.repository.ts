import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type ProjectionType, type QueryFilter, type UpdateQuery } from 'mongoose';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import { Clock } from '../lanes/clock.js';
import type { PendingEvent } from '../events/pending-event.schema.js';
import type { ConversationCsat } from '../csat/csat.js';
import { sortKeyOf, walkSegments, type ConversationPosition, type ConversationSort } from './conversation-order.js';
import { Conversation, type ConversationContact, type ConversationLastMessage } from './conversation.schema.js';

/** Every write moves the revision, so a change pinned to a revision fails if anything changed since its read. */
function withNextRevision(update: UpdateQuery<Conversation>): UpdateQuery<Conversation> {
  return { ...update, $inc: { ...(update.$inc as object), revision: 1 } };
}

/** The conversation a message goes to: by id, or the contact's open one on a channel. */
export type MessageTarget = Types.ObjectId | { contactId: Types.ObjectId; channel: string };

/** A page of a list walk: the conversations, and where the next page starts (null: this was the last). */
export interface WalkPage {
  data: Stored<Conversation>[];
  next: ConversationPosition | null;
}

/** What a message does to its conversation (recordMessage). */
export interface RecordedMessage {
  /** The message's time. */
  at: Date;
  /** The message as the conversation shows it (`lastMessage`); an inbound one counts in `inboundCount`. */
  last: ConversationLastMessage;
  /** An agent's message: the first sets `firstResponseAt` (bot messages, auto-replies and surveys are no answer). */
  isResponse: boolean;
  /** An inbound message on a channel with a reply window: when the window it opens closes. */
  opensReplyWindowUntil?: Date;
  /**
   * A free-form outbound message: the company's channel keys that have a reply window. On one of them, the message
   * is recorded only while the conversation's window is open at `at`.
   */
  windowedChannels?: readonly string[];
}

/** A conversation about to be inserted, with what its events show of it. */
export type NewConversation = Pick<Conversation, 'contactId' | 'contact' | 'channel'> & Partial<Conversation>;

/** The conversations collection: every write of it, and its reads but the queues' (ConversationQueueRepository). */
@Injectable()
export class ConversationsRepository extends EventSourceRepository<Conversation> {
  constructor(
    @InjectModel(Conversation.name) model: Model<Conversation>,
    relay: EventRelay,
    private readonly clock: Clock,
  ) {
    super(model, relay);
  }

  /** The contact's open conversation on a channel; served by the partial unique index, which needs `isOpen: true`. */
  async findOpen(companyId: CompanyId, contactId: Types.ObjectId, channel: string): Promise<Stored<Conversation> | null> {
    return this.findOne(companyId, { contactId, channel, isOpen: true });
  }

  /**
   * Inserts a new conversation with the events `stage` makes of it: the record is complete before the write
   * (its id and times chosen here), so the events show it exactly as stored.
   */
  async insert(companyId: CompanyId, data: NewConversation, stage: (stored: Stored<Conversation>) => PendingEvent[]): Promise<Stored<Conversation>> {
    // The Clock's time: SLA deadlines are measured from it.
    const now = this.clock.now();
    const record = {
      status: 'bot',
      priority: 'medium',
      assignedAgentId: null,
      assignedAt: null,
      assignedBy: null,
      tags: [],
      attributes: {},
      subject: null,
      lastMessageAt: null,
      lastMessage: null,
      lastActivityAt: now,
      inboundCount: 0,
      assigneeUnread: false,
      firstResponseAt: null,
      queuedAt: null,
      closedAt: null,
      closeReason: null,
      snoozedUntil: null,
      sleep: null,
      sla: null,
      csat: null,
      replyWindowExpiresAt: null,
      teamId: null,
      requiredSkills: [],
      isOpen: true,
      revision: 0,
      ...data,
      _id: new Types.ObjectId(),
      companyId: new Types.ObjectId(String(companyId)),
      createdAt: now,
      updatedAt: now,
    } as Stored<Conversation>;
    return this.insertWithEvents(companyId, record, stage(record));
  }

  /**
   * Applies `set` to `current` if it is still at the same revision and matches `expected`, with the events
   * `stage` makes of the result. Null when anything changed since `current` was read (nothing written, no event).
   */
  async change(
    companyId: CompanyId,
    current: Stored<Conversation>,
    expected: QueryFilter<Conversation>,
    set: Partial<Conversation>,
    stage: (after: Stored<Conversation>) => PendingEvent[] = () => [],
  ): Promise<Stored<Conversation> | null> {
    const updatedAt = new Date();
    const revision = current.revision ?? 0;
    const after = { ...current, ...set, updatedAt, revision: revision + 1, pendingEvents: undefined } as Stored<Conversation>;
    // `revision: null` also matches a record written before revisions existed.
    const filter = { ...expected, _id: current._id, revision: current.revision ?? null } as QueryFilter<Conversation>;
    return this.updateWithEvents(companyId, filter, withNextRevision({ $set: { ...set, updatedAt } }), stage(after), { timestamps: false });
  }

  /** A write that emits no event (tags, priority); still moves the revision. */
  override async updateOne(companyId: CompanyId, filter: QueryFilter<Conversation>, update: UpdateQuery<Conversation>): Promise<Stored<Conversation> | null> {
    return super.updateOne(companyId, filter, withNextRevision(update));
  }

  /**
   * Records a new message (`last`, at `at`) on an open conversation, given by id or as the contact's open one on a
   * channel (found and updated in the same write): it becomes `lastMessage`, `lastMessageAt` and `lastActivityAt`
   * only move forward, an inbound message counts in `inboundCount` (and is unread by the assignee), and a response
   * (outbound message) sets `firstResponseAt` once. An inbound message on a channel with a reply window moves
   * `replyWindowExpiresAt` (only forward), and a free-form message on such a channel is recorded only while the
   * window is open. Answers null when the conversation is missing or closed, or its window refuses the message, so a
   * message can never land in a closed conversation or outside its window. Events the conversation still carries
   * (its creation, written by another process a moment ago) are relayed now, so they are logged before the message's.
   */
  async recordMessage(companyId: CompanyId, target: MessageTarget, recorded: RecordedMessage): Promise<Stored<Conversation> | null> {
    const { at, isResponse, last, opensReplyWindowUntil, windowedChannels } = recorded;
    const open: QueryFilter<Conversation> = target instanceof Types.ObjectId ? { _id: target, isOpen: true } : { ...target, isOpen: true };
    // Without windowed channels (the company has none) the filter is exactly what it was before reply windows.
    if (windowedChannels?.length) open.$or = [{ channel: { $nin: windowedChannels } }, { replyWindowExpiresAt: { $gt: at } }];
    const inbound = last.direction === 'inbound';
    const moved = { lastMessageAt: at, lastActivityAt: at, ...(opensReplyWindowUntil ? { replyWindowExpiresAt: opensReplyWindowUntil } : {}) };
    // Every message writes here: the filter and update are of stored types already, so they go as they are.
    const record = (filter: QueryFilter<Conversation>, set: Partial<Conversation> = {}) =>
      this.updateAsIs(
        companyId,
        filter,
        withNextRevision({
          $set: { ...set, lastMessage: last, ...(inbound ? { assigneeUnread: true } : {}), updatedAt: new Date() },
          $max: moved,
          ...(inbound ? { $inc: { inboundCount: 1 } } : {}),
        }),
      );
    if (!isResponse) return record(open);
    // Most responses follow the first: try that case first, so a reply usually costs one write. A miss is the first
    // response, or a concurrent first response set it meanwhile, or the conversation is closed or missing.
    const later = await record({ ...open, firstResponseAt: { $ne: null } });
    if (later) return later;
    return (await record({ ...open, firstResponseAt: null }, { firstResponseAt: at })) ?? record(open);
  }

  /** Removes `key` from the attributes of every conversation of the company holding it (its definition was deleted). */
  async unsetAttribute(companyId: CompanyId, key: string): Promise<number> {
    const path = `attributes.${key}`;
    return this.updateMany(companyId, { [path]: { $exists: true } }, withNextRevision({ $unset: { [path]: 1 } }));
  }

  /** Replaces the copy of the contact on each of its conversations (null: the contact was deleted). */
  async setContact(companyId: CompanyId, contactId: Types.ObjectId, contact: ConversationContact | null): Promise<number> {
    return this.updateMany(companyId, { contactId }, withNextRevision({ $set: { contact } }));
  }

  /**
   * Moves every conversation of contact `from` to contact `to` (a merge), each keeping the contact it began with as
   * `originalContactId` and the move in `mergeHistory`. Idempotent: a repeat finds nothing left on `from`.
   */
  async moveToContact(companyId: CompanyId, from: Types.ObjectId, to: Types.ObjectId, contact: ConversationContact, mergeId: Types.ObjectId): Promise<void> {
    await this.updateMany(companyId, { contactId: from, originalContactId: null }, withNextRevision({ $set: { originalContactId: from } }));
    await this.updateMany(companyId, { contactId: from }, withNextRevision({ $set: { contactId: to, contact }, $push: { mergeHistory: { mergeId, from } } }));
  }

  /** Undoes `moveToContact` of merge `mergeId` for the conversations it moved from `to`. Idempotent. */
  async moveBackToContact(companyId: CompanyId, mergeId: Types.ObjectId, to: Types.ObjectId, contact: ConversationContact): Promise<void> {
    await this.updateMany(
      companyId,
      // The equality lets the planner take the partial index on `mergeHistory.mergeId`.
      { 'mergeHistory.mergeId': mergeId, mergeHistory: { $elemMatch: { mergeId, from: to } } },
      withNextRevision({ $set: { contactId: to, contact }, $pull: { mergeHistory: { mergeId } } }),
    );
    // Back with the contact it began with and moved by no other merge: it never moved, as far as it shows.
    await this.updateMany(companyId, { contactId: to, originalContactId: to, mergeHistory: { $size: 0 } }, withNextRevision({ $unset: { originalContactId: 1, mergeHistory: 1 } }));
  }

  /** The contact's open conversations (a merge closes those the target has one open on the same channel of). */
  async openOfContact(companyId: CompanyId, contactId: Types.ObjectId): Promise<Stored<Conversation>[]> {
    return this.find(companyId, { contactId, isOpen: true });
  }

  /** Contacts (with their company) of conversations stored before conversations kept a copy of their contact. */
  async withoutContactCopy(limit: number): Promise<{ companyId: Types.ObjectId; contactId: Types.ObjectId }[]> {
    return this.model
      .find({ contact: { $exists: false } }, { companyId: 1, contactId: 1 })
      .limit(limit)
      .setOptions({ [CROSS_TENANT]: true })
      .lean<{ companyId: Types.ObjectId; contactId: Types.ObjectId }[]>()
      .exec();
  }

  /** Conversations stored before the inbox kept its fields on them (lastActivityAt, inboundCount, lastMessage). */
  async withoutInboxFields(limit: number): Promise<Pick<Stored<Conversation>, '_id' | 'companyId' | 'createdAt' | 'lastMessageAt'>[]> {
    return this.model
      .find({ lastActivityAt: { $exists: false } }, { companyId: 1, createdAt: 1, lastMessageAt: 1 })
      .limit(limit)
      .setOptions({ [CROSS_TENANT]: true })
      .lean<Pick<Stored<Conversation>, '_id' | 'companyId' | 'createdAt' | 'lastMessageAt'>[]>()
      .exec();
  }

  /** Fills in the inbox's fields of a conversation stored before them (see withoutInboxFields), once. */
  async fillInboxFields(companyId: CompanyId, id: Types.ObjectId, fields: Pick<Conversation, 'lastActivityAt' | 'inboundCount' | 'lastMessage'>): Promise<void> {
    await this.updateAsIs(companyId, { _id: id, lastActivityAt: { $exists: false } }, withNextRevision({ $set: { ...fields, assigneeUnread: fields.inboundCount > 0 } }));
  }

  /** Whether the conversation still carries the event `eventId` as pending (not yet in the log). */
  async hasPendingEvent(companyId: CompanyId, id: string, eventId: string): Promise<boolean> {
    const _id = parseObjectId(id);
    return _id !== null && (await this.findOne(companyId, { _id, 'pendingEvents.id': eventId }, { _id: 1 })) !== null;
  }

  /** Open `human` conversations per agent (agents with none are absent); served by companyId+assignedAgentId. */
  async openConversationsByAgent(companyId: CompanyId, agentIds: Types.ObjectId[]): Promise<Map<string, number>> {
    const rows = await this.aggregate<{ _id: Types.ObjectId; open: number }>(companyId, [
      { $match: { assignedAgentId: { $in: agentIds }, status: 'human' } },
      { $group: { _id: '$assignedAgentId', open: { $sum: 1 } } },
    ]);
    return new Map(rows.map((row) => [row._id.toHexString(), row.open]));
  }

  /**
   * A page of the list in `sort` order after `after` (none: the first page), within `filter` (stored types: read
   * with findPlain), reading `limit` + 1 to learn whether there is a next page. The `waiting` walk's second segment
   * (conversations never queued) is read only when the first leaves the page short.
   */
  async walk(
    companyId: CompanyId,
    filter: QueryFilter<Conversation>,
    sort: ConversationSort,
    after: ConversationPosition | null,
    limit: number,
    projection: ProjectionType<Conversation>,
  ): Promise<WalkPage> {
    const rows: Stored<Conversation>[] = [];
    for (const segment of walkSegments(sort, after)) {
      rows.push(...(await this.findPlain(companyId, { ...filter, ...segment.filter }, { sort: segment.sort, limit: limit + 1 - rows.length, projection })));
      if (rows.length > limit) break;
    }
    const data = rows.slice(0, limit);
    const last = data.at(-1);
    // The last row's own key says where it is: a waiting walk past its queued conversations continues by _id.
    const next = rows.length > limit && last ? { sort, key: sortKeyOf(sort, last), id: last._id } : null;
    return { data, next };
  }

  /** The inbound-message counter of each of these conversations (unread counts are computed from it). */
  async inboundCounts(companyId: CompanyId, ids: Types.ObjectId[]): Promise<Map<string, number>> {
    const rows = await this.findPlain(companyId, { _id: { $in: ids } }, { projection: { inboundCount: 1 }, limit: ids.length });
    return new Map(rows.map((row) => [row._id.toHexString(), row.inboundCount ?? 0]));
  }

  /**
   * Clears `assigneeUnread` once `agentId`, the assignee, has read up to `readCount` inbound messages, if no inbound
   * message arrived since (the filter on the counter) and it is still that agent's.
   */
  async clearAssigneeUnread(companyId: CompanyId, id: Types.ObjectId, agentId: Types.ObjectId, readCount: number): Promise<void> {
    await this.updateAsIs(
      companyId,
      { _id: id, assignedAgentId: agentId, assigneeUnread: true, inboundCount: { $lte: readCount } },
      withNextRevision({ $set: { assigneeUnread: false } }),
    );
  }

  /**
   * Applies `set` (the service-level fields) if the conversation's SLA is still at the version `current` shows (none:
   * it has none). With events (`stage`), pinned to the revision too, so that they show the record as stored; without,
   * other writes of the conversation meanwhile do not matter. Null when it moved meanwhile (nothing written).
   */
  async changeSla(
    companyId: CompanyId,
    current: Stored<Conversation>,
    set: Partial<Conversation>,
    stage?: (after: Stored<Conversation>) => PendingEvent[],
  ): Promise<Stored<Conversation> | null> {
    const version = current.sla?.version ?? null;
    const expected: QueryFilter<Conversation> = version === null ? { sla: null } : { 'sla.version': version };
    if (stage) return this.change(companyId, current, expected, set, stage);
    return this.updateOne(companyId, { ...expected, _id: current._id }, { $set: set });
  }

  /** The version of the conversation's SLA now (null: none, or no such conversation). */
  async slaVersion(companyId: CompanyId, id: Types.ObjectId): Promise<number | null> {
    const found = await this.findOnePlain(companyId, { _id: id }, { 'sla.version': 1 });
    return found?.sla?.version ?? null;
  }

  /** Ids of open conversations whose SLA counts business hours, after `after`, ascending; on open_business_hours_slas. */
  async withBusinessHoursSla(companyId: CompanyId, after: Types.ObjectId | null, limit: number): Promise<Types.ObjectId[]> {
    const filter: QueryFilter<Conversation> = { isOpen: true, 'sla.businessHoursOnly': true, ...(after ? { _id: { $gt: after } } : {}) };
    const rows = await this.findPlain(companyId, filter, { sort: { _id: 1 }, limit, projection: { _id: 1 } });
    return rows.map((row) => row._id);
  }

  /**
   * Records the satisfaction survey at `at` on a closed conversation awaiting its rating (`csat` asked for, not
   * given): the one message a closed conversation takes. Null otherwise.
   */
  async recordSurveyMessage(companyId: CompanyId, id: Types.ObjectId, last: ConversationLastMessage): Promise<Stored<Conversation> | null> {
    const filter = { _id: id, isOpen: false, 'csat.requestedAt': { $ne: null }, 'csat.submittedAt': null };
    const at = last.createdAt;
    return this.updateAsIs(companyId, filter, withNextRevision({ $set: { lastMessage: last, updatedAt: new Date() }, $max: { lastMessageAt: at, lastActivityAt: at } }));
  }

  /** Makes a closed conversation await a rating (`csat`), unless it was asked for already. */
  async requestCsat(companyId: CompanyId, id: Types.ObjectId, csat: ConversationCsat): Promise<void> {
    await this.updateAsIs(companyId, { _id: id, isOpen: false, csat: null }, withNextRevision({ $set: { csat, updatedAt: new Date() } }));
  }

  /** Which of these conversations have an SLA; one read on {companyId, _id}. */
  async withSla(companyId: CompanyId, ids: Types.ObjectId[]): Promise<Set<string>> {
    const rows = await this.findPlain(companyId, { _id: { $in: ids }, sla: { $ne: null } }, { projection: { _id: 1 }, limit: ids.length });
    return new Set(rows.map((row) => row._id.toHexString()));
  }
}
