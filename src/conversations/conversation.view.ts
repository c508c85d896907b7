import { ApiProperty } from '@nestjs/swagger';
import { attributesView } from '../attributes/attribute-values.js';
import { isoTime, isoTimeOrNull as iso } from '../common/iso-time.js';
import { ContactSummaryView } from '../contacts/contact.view.js';
import { ConversationCsatView } from '../csat/csat.view.js';
import { ConversationSlaView } from '../service-levels/sla.view.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { MessageDirection, MessageType, SenderType } from '../messages/message.schema.js';
import type { AssignerKind, Conversation, ConversationLastMessage, ConversationStatus, Priority } from './conversation.schema.js';

/** The stored fields ConversationView shows (with `_id`): what a read made only for the view projects. */
export const CONVERSATION_VIEW_FIELDS = {
  contactId: 1,
  contact: 1,
  channel: 1,
  status: 1,
  priority: 1,
  assignedAgentId: 1,
  assignedAt: 1,
  assignedBy: 1,
  tags: 1,
  attributes: 1,
  subject: 1,
  lastMessageAt: 1,
  lastMessage: 1,
  firstResponseAt: 1,
  queuedAt: 1,
  closedAt: 1,
  closeReason: 1,
  snoozedUntil: 1,
  sla: 1,
  csat: 1,
  replyWindowExpiresAt: 1,
  teamId: 1,
  requiredSkills: 1,
  createdAt: 1,
  updatedAt: 1,
} as const;

/**
 * What a list page reads of each conversation: its view's fields, the inbound counter its reader's unread count is
 * computed from, and the sort keys a cursor continues from.
 */
export const LISTED_CONVERSATION_FIELDS = { ...CONVERSATION_VIEW_FIELDS, inboundCount: 1, lastActivityAt: 1 } as const;

/** Where a queued conversation stands (contract section 19). */
export class QueueStandingView {
  teamId: string | null;
  /** From 1, in routing order */
  position: number;
  waitingSeconds: number;
}

export class AssignedByView {
  /** agent (through the API), flow (a flow step) or auto */
  kind: AssignerKind;
  /** The agent's or flow's id; null for auto */
  id: string | null;
}

/** The newest message of a conversation, enough for an inbox row (private notes are never its last message). */
export class LastMessageView {
  /** @example 6650f0c2a1b2c3d4e5f60721 */
  id: string;
  direction: MessageDirection;
  senderType: SenderType;
  type: MessageType;
  /**
   * The first 160 characters of the text or caption; for media without caption its type in brackets
   * @example Where is my order? It was due yesterday.
   */
  preview: string;
  createdAt: string;

  static from(last: ConversationLastMessage): LastMessageView {
    return {
      id: last.id.toHexString(),
      direction: last.direction,
      senderType: last.senderType,
      type: last.type,
      preview: last.preview,
      createdAt: isoTime(last.createdAt),
    };
  }
}

/**
 * A conversation as the API, the event log and the webhook payloads show it: with its contact, so that a list renders
 * without a call per row and a connector learns from `message.sent` alone whom to send to.
 */
export class ConversationView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example 6650f0c2a1b2c3d4e5f60719 */
  contactId: string;
  /** Its contact (in events: as it was when the event was written); null once the contact has been deleted */
  contact: ContactSummaryView | null;
  /** @example whatsapp */
  channel: string;
  status: ConversationStatus;
  priority: Priority;
  assignedAgentId: string | null;
  assignedAt: string | null;
  assignedBy: AssignedByView | null;
  /** @example ["vip"] */
  tags: string[];
  /** Values of your conversation attribute definitions; dates as ISO-8601. @example {"order_number":"1042"} */
  @ApiProperty({ additionalProperties: true })
  attributes: Record<string, unknown>;
  subject: string | null;
  lastMessageAt: string | null;
  /** Its newest message (in events: as of the event); null before the first */
  lastMessage: LastMessageView | null;
  /** The first agent message (bot messages and auto-replies are no answer); for a conversation you started with `message`, that message */
  firstResponseAt: string | null;
  /** When it last entered the queue */
  queuedAt: string | null;
  closedAt: string | null;
  closeReason: string | null;
  /** Snoozed until then (POST /conversations/{id}/snooze); null when awake */
  snoozedUntil: string | null;
  /**
   * On a channel with a reply window: when it closes (the contact's last message + the channel's
   * `replyWindowHours`); null before any inbound message, when it is not open yet, and on channels without a window.
   * Free-form messages after it answer 409 `reply-window-closed`; templates go through
   */
  replyWindowExpiresAt: string | null;
  /**
   * Its SLA policy's deadlines and missed targets; null when no SLA policy matched it. Set a moment after the
   * change it follows (opening, a message, a priority change), by a consumer of the event log
   */
  sla: ConversationSlaView | null;
  /** The contact's satisfaction rating; null until one is given */
  csat: ConversationCsatView | null;
  /** The team whose queue it is in (or was); null: the company queue */
  teamId: string | null;
  /** Skills an agent must all hold to be routed it */
  requiredSkills: string[];
  /** Single GET only, while `queued`: where it stands in its queue */
  queue?: QueueStandingView | null;
  createdAt: string;
  updatedAt: string;

  static from(conversation: Stored<Conversation>): ConversationView {
    const contactId = conversation.contactId.toHexString();
    return {
      id: conversation._id.toHexString(),
      contactId,
      contact: conversation.contact ? { id: contactId, ...conversation.contact } : null,
      channel: conversation.channel,
      status: conversation.status,
      priority: conversation.priority,
      assignedAgentId: conversation.assignedAgentId?.toHexString() ?? null,
      assignedAt: iso(conversation.assignedAt),
      assignedBy: conversation.assignedBy
        ? { kind: conversation.assignedBy.kind, id: conversation.assignedBy.id?.toHexString() ?? null }
        : null,
      tags: conversation.tags,
      attributes: attributesView(conversation.attributes),
      subject: conversation.subject ?? null,
      lastMessageAt: iso(conversation.lastMessageAt),
      lastMessage: conversation.lastMessage ? LastMessageView.from(conversation.lastMessage) : null,
      firstResponseAt: iso(conversation.firstResponseAt),
      queuedAt: iso(conversation.queuedAt),
      closedAt: iso(conversation.closedAt),
      closeReason: conversation.closeReason ?? null,
      snoozedUntil: iso(conversation.snoozedUntil),
      replyWindowExpiresAt: iso(conversation.replyWindowExpiresAt),
      sla: ConversationSlaView.from(conversation.sla),
      csat: ConversationCsatView.from(conversation.csat),
      teamId: conversation.teamId?.toHexString() ?? null,
      requiredSkills: conversation.requiredSkills ?? [],
      createdAt: isoTime(conversation.createdAt),
      updatedAt: isoTime(conversation.updatedAt),
    };
  }
}
