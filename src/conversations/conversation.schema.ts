import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import type { ContactSummary } from '../contacts/contact-summary-changed.js';
import type { ConversationCsat } from '../csat/csat.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';
import type { ConversationSla } from '../service-levels/sla-state.js';
import type { MessageDirection, MessageType, SenderType } from '../messages/message.schema.js';
import type { SleepRecord } from './snooze/sleep.js';

export const CONVERSATION_STATUSES = ['bot', 'queued', 'human', 'closed'] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];
export const PRIORITIES = ['low', 'medium', 'high'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Who assigned a conversation: an agent through the API, a flow step, or automatic assignment. */
export const ASSIGNER_KINDS = ['agent', 'flow', 'auto'] as const;
export type AssignerKind = (typeof ASSIGNER_KINDS)[number];

export interface AssignedBy {
  kind: AssignerKind;
  /** The agent's or flow's id; null for automatic assignment. */
  id: Types.ObjectId | null;
}

/**
 * What a conversation keeps of its contact, so that its events (taken when they are written) and its REST answers
 * show whom it is with without reading the contact: kept in step by ContactSummaries, null once the contact is deleted.
 */
export type ConversationContact = ContactSummary;

/**
 * The newest message of a conversation, as an inbox row previews it (contract section 14): written by the same write
 * that records the message (ConversationsRepository.recordMessage), so a list page needs no read of messages.
 */
export interface ConversationLastMessage {
  id: Types.ObjectId;
  direction: MessageDirection;
  senderType: SenderType;
  type: MessageType;
  /** The first 160 characters of the text or caption; `[image]`-style for media without caption. */
  preview: string;
  createdAt: Date;
}

/** A merge that moved a conversation, and the contact it moved it from. */
export interface ConversationMove {
  mergeId: Types.ObjectId;
  from: Types.ObjectId;
}

/** A conversation with one contact on one channel (contract section 4); its changes carry their events. */
@Schema({ collection: 'conversations', timestamps: true, minimize: false })
export class Conversation extends EventSource {
  // SchemaTypes.ObjectId: given Types.ObjectId, Mongoose 9 declares a Mixed path that never casts string ids.
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  contactId: Types.ObjectId;

  @Prop({ type: Object, default: null })
  contact: ConversationContact | null;

  /** The contact it began with, once a merge moved it to another (contract section 22); absent until then. */
  @Prop({ type: SchemaTypes.ObjectId })
  originalContactId?: Types.ObjectId;

  /** The merges that moved it, each with the contact it was moved from: what an undo moves it back by. */
  @Prop({ type: [Object], default: undefined })
  mergeHistory?: ConversationMove[];

  /** The messaging channel, e.g. "whatsapp", "sms", "email", "web", "api". */
  @Prop({ required: true, trim: true, lowercase: true, maxlength: 64, default: 'api' })
  channel: string;

  @Prop({ type: String, enum: CONVERSATION_STATUSES, required: true, default: 'bot' })
  status: ConversationStatus;

  @Prop({ type: String, enum: PRIORITIES, required: true, default: 'medium' })
  priority: Priority;

  @Prop({ type: SchemaTypes.ObjectId, default: null })
  assignedAgentId: Types.ObjectId | null;

  /** When and by whom the current agent was assigned; cleared with the assignment. */
  @Prop({ type: Date, default: null })
  assignedAt: Date | null;

  @Prop({ type: Object, default: null })
  assignedBy: AssignedBy | null;

  @Prop({ type: [String], default: [] })
  tags: string[];

  @Prop({ type: String, trim: true, maxlength: 500, default: null })
  subject: string | null;

  /** Values of the company's conversation attribute definitions (contract section 20); dates stored as Dates. */
  @Prop({ type: Object, default: {} })
  attributes: Record<string, unknown>;

  @Prop({ type: Date, default: null })
  lastMessageAt: Date | null;

  @Prop({ type: Object, default: null })
  lastMessage: ConversationLastMessage | null;

  /**
   * When it last had a message, else when it was created: the `lastActivity` order of the inbox. Unlike lastMessageAt
   * never null, so the order needs no special place for conversations without messages. Only moves forward.
   */
  @Prop({ type: Date, default: Date.now })
  lastActivityAt: Date;

  /** Inbound messages recorded so far: an agent's unread count is this less the count its read marker saw. */
  @Prop({ type: Number, default: 0 })
  inboundCount: number;

  /**
   * Whether the assigned agent has inbound messages it has not read (set by each inbound message, cleared when that
   * agent reads them, recomputed on assignment): what the `mineUnread` count counts, on an index.
   */
  @Prop({ type: Boolean, default: false })
  assigneeUnread: boolean;

  /** The first agent message (bot messages, auto-replies and notes are no answer): first-response time. */
  @Prop({ type: Date, default: null })
  firstResponseAt: Date | null;

  /** When it last entered the queue: the dashboard's oldest waiting time. */
  @Prop({ type: Date, default: null })
  queuedAt: Date | null;

  @Prop({ type: Date, default: null })
  closedAt: Date | null;

  /**
   * On a channel with a reply window (contract section 17): when the window the contact's last message opened
   * closes, set by the write that records an inbound message. Null before any inbound message on such a channel.
   */
  @Prop({ type: Date, default: null })
  replyWindowExpiresAt: Date | null;

  @Prop({ type: String, maxlength: 500, default: null })
  closeReason: string | null;

  /** Its SLA policy's targets and running clocks (service-levels/sla-state.ts); null when no policy ever matched. */
  @Prop({ type: Object, default: null })
  sla: ConversationSla | null;

  /** The satisfaction survey sent when it closed, and the rating (csat/csat.ts); null when none was asked for. */
  @Prop({ type: Object, default: null })
  csat: ConversationCsat | null;

  /**
   * Snoozed until then (contract section 15): a durable timer wakes it, as do the contact's next message, an
   * agent's unsnooze, and a close. Null while awake.
   */
  @Prop({ type: Date, default: null })
  snoozedUntil: Date | null;

  /** Its sleeps so far (snooze/sleep.ts), so that clocks can leave them out; null until first snoozed. */
  @Prop({ type: Object, default: null })
  sleep: SleepRecord | null;

  /** The team whose queue it waits in, or whose it was (contract section 19); null: the company queue. */
  @Prop({ type: SchemaTypes.ObjectId, default: null })
  teamId: Types.ObjectId | null;

  /** Skills an agent must all hold to be routed it. */
  @Prop({ type: [String], default: [] })
  requiredSkills: string[];

  /**
   * Its last queue timeout: the queue entry (QueueTimeouts' timer key) whose `conversation.queue_timeout` was written,
   * so it is written once, when, and in which team's queue (the teams report counts them).
   */
  @Prop({ type: Object, default: null })
  queueTimeout: { key: string; at: Date; teamId: Types.ObjectId } | null;

  /**
   * True while not closed. A partial unique index on it allows one open conversation per contact
   * and channel, which is what keeps concurrent inbound messages from opening two.
   */
  @Prop({ type: Boolean, default: true })
  isOpen: boolean;

  /**
   * Moves with every write (ConversationsRepository). A change that emits events is applied only to the
   * revision it was computed from, so the snapshot its events carry is exactly the record it leaves.
   */
  @Prop({ type: Number, default: 0 })
  revision: number;
}

export const ConversationSchema = SchemaFactory.createForClass(Conversation);
ConversationSchema.plugin(tenantScopePlugin);
indexPendingEvents(ConversationSchema);
ConversationSchema.index({ companyId: 1, _id: -1 });
ConversationSchema.index({ companyId: 1, status: 1, _id: -1 });
ConversationSchema.index({ companyId: 1, assignedAgentId: 1, _id: -1 });
// A contact's conversations: its summary kept in step, and the list filtered by contact.
ConversationSchema.index({ companyId: 1, contactId: 1, _id: -1 });
ConversationSchema.index({ companyId: 1, priority: 1, _id: -1 });
// The queue auto-assignment serves (awake queued conversations, oldest first), and snoozed ones by status.
ConversationSchema.index({ companyId: 1, status: 1, snoozedUntil: 1, _id: 1 });
ConversationSchema.index({ companyId: 1, createdAt: 1 });
ConversationSchema.index({ companyId: 1, closedAt: 1 });
ConversationSchema.index({ companyId: 1, firstResponseAt: 1 });
// Assignments by when they were made (the agents report).
ConversationSchema.index({ companyId: 1, assignedAt: 1 });
// The open conversations whose SLA counts business hours: those a change of business hours moves (SlaRecompute).
ConversationSchema.index(
  { companyId: 1, _id: 1 },
  { partialFilterExpression: { isOpen: true, 'sla.businessHoursOnly': true }, name: 'open_business_hours_slas' },
);
// Ratings by the time they were given (analytics).
ConversationSchema.index({ companyId: 1, 'csat.submittedAt': 1 }, { sparse: true });
// The inbox (contract section 14; docs/inbox.md lists which list queries each serves): the activity order alone, by
// status(es) (an `$in` of statuses is merged from one interval per status), and by assignee (mine, unassigned); the
// waiting order; the assignee's unread conversations and the snoozed ones, counted on their own index.
ConversationSchema.index({ companyId: 1, lastActivityAt: -1, _id: -1 });
ConversationSchema.index({ companyId: 1, status: 1, lastActivityAt: -1, _id: -1 });
ConversationSchema.index({ companyId: 1, assignedAgentId: 1, status: 1, lastActivityAt: -1, _id: -1 });
ConversationSchema.index({ companyId: 1, queuedAt: 1, _id: 1 });
ConversationSchema.index({ companyId: 1, status: 1, queuedAt: 1, _id: 1 });
ConversationSchema.index(
  { companyId: 1, assignedAgentId: 1, status: 1 },
  { partialFilterExpression: { assigneeUnread: true }, name: 'assignee_unread' },
);
ConversationSchema.index({ companyId: 1, snoozedUntil: 1 });
// Each queue in routing order (contract section 19): one interval per priority, oldest first within it.
ConversationSchema.index({ companyId: 1, status: 1, teamId: 1, priority: 1, snoozedUntil: 1, queuedAt: 1, _id: 1 });
// The teams report: conversations by team, over the time they entered the queue.
ConversationSchema.index({ companyId: 1, teamId: 1, queuedAt: 1 });
ConversationSchema.index({ companyId: 1, 'queueTimeout.at': 1 }, { sparse: true });
ConversationSchema.index(
  { companyId: 1, contactId: 1, channel: 1 },
  { unique: true, partialFilterExpression: { isOpen: true }, name: 'one_open_conversation_per_contact_channel' },
);
// Filters (contract section 20, docs/filters.md): every filterable field on an index led by the company; custom
// attributes on MongoDB 7's compound wildcard index (one key per attribute a conversation holds).
ConversationSchema.index({ companyId: 1, 'attributes.$**': 1 });
// A saved view's usual filter, attributes within statuses: counted from this index alone (docs/filters.md).
ConversationSchema.index({ companyId: 1, status: 1, 'attributes.$**': 1 });
ConversationSchema.index({ companyId: 1, channel: 1, _id: -1 });
ConversationSchema.index({ companyId: 1, tags: 1, _id: -1 });
ConversationSchema.index({ companyId: 1, lastMessageAt: 1 });
ConversationSchema.index({ companyId: 1, 'sla.breaches': 1 }, { sparse: true });
ConversationSchema.index({ companyId: 1, 'csat.rating': 1 }, { sparse: true });
ConversationSchema.index({ companyId: 1, subject: 1 });
// The conversations a merge moved, which its undo moves back.
ConversationSchema.index({ companyId: 1, 'mergeHistory.mergeId': 1 }, { partialFilterExpression: { 'mergeHistory.mergeId': { $exists: true } } });
