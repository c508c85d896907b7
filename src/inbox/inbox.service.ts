import { Injectable, NotFoundException } from '@nestjs/common';
import type { Types } from 'mongoose';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { isoTimeOrNull } from '../common/iso-time.js';
import type { Page } from '../common/pagination/page.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import { ConversationLists } from '../conversations/conversation-lists.js';
import type { ConversationCountsView } from '../conversations/conversation-counts.view.js';
import { QueueStanding } from '../conversations/queue-standing.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { LISTED_CONVERSATION_FIELDS } from '../conversations/conversation.view.js';
import type { ListConversationsQueryDto } from '../conversations/dto/list-conversations-query.dto.js';
import { ReadMarkersRepository, type ReadPosition } from '../conversations/read-markers.repository.js';
import { parseObjectId, toObjectId } from '../database/object-id.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { Clock } from '../lanes/clock.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { AgentConversationView, ReadStateView, unreadCountOf } from './agent-conversation.view.js';

/**
 * What an agent sees of conversations (contract section 14): every REST answer with a conversation adds how far the
 * calling agent has read it (`unreadCount`, `lastReadAt`), from its read marker; and the markers themselves, which
 * only move forward. A list page costs one read of conversations and one of the caller's markers on them.
 */
@Injectable()
export class InboxService {
  constructor(
    private readonly lists: ConversationLists,
    private readonly conversationRecords: ConversationsRepository,
    private readonly markers: ReadMarkersRepository,
    private readonly messages: MessagesRepository,
    private readonly clock: Clock,
    private readonly queueStanding: QueueStanding,
  ) {}

  async list(agent: AgentPrincipal, query: ListConversationsQueryDto): Promise<Page<AgentConversationView>> {
    const page = await this.lists.page(agent.companyId, query);
    return { data: await this.forAgent(agent, page.data), nextCursor: page.nextCursor };
  }

  /** The inbox's counts for the agent (ConversationLists.counts). */
  counts(agent: AgentPrincipal): Promise<ConversationCountsView> {
    return this.lists.counts(agent.companyId, agent.agentId);
  }

  /** Stored conversations (LISTED_CONVERSATION_FIELDS) as the agent sees them: one read of its markers on them. */
  async forAgent(agent: AgentPrincipal, conversations: Stored<Conversation>[]): Promise<AgentConversationView[]> {
    const markers = await this.markers.forConversations(agent.companyId, toObjectId(agent.agentId), conversations.map((c) => c._id));
    return conversations.map((c) => AgentConversationView.fromStored(c, markers.get(c._id.toHexString())));
  }

  /** 404 for a missing, malformed or foreign id. */
  async get(agent: AgentPrincipal, id: string): Promise<AgentConversationView> {
    const _id = parseObjectId(id);
    const [conversation, marker] = _id
      ? await Promise.all([this.conversationRecords.findOnePlain(agent.companyId, { _id }, LISTED_CONVERSATION_FIELDS), this.markerOf(agent, _id)])
      : [null, null];
    if (!conversation) throw new NotFoundException(`Conversation ${id} not found`);
    const view = AgentConversationView.fromStored(conversation, marker ?? undefined);
    view.queue = await this.queueStanding.of(agent.companyId, conversation);
    return view;
  }

  /**
   * The answer of a change the agent made (assign, close, patch, start): the conversation as the change left it, and
   * the agent's reading of it, whose inbound counter is read beside its marker.
   */
  async present(agent: AgentPrincipal, view: ConversationView): Promise<AgentConversationView> {
    const id = toObjectId(view.id);
    const [counts, marker] = await Promise.all([this.conversationRecords.inboundCounts(agent.companyId, [id]), this.markerOf(agent, id)]);
    return AgentConversationView.of(view, counts.get(view.id) ?? 0, marker ?? undefined);
  }

  /**
   * Moves the agent's read marker to `messageId` (a message of this conversation; default its newest), if that is
   * ahead of the marker: markers only move forward, so an older message answers the marker as it stands. 404 for a
   * missing or foreign conversation, 400 for a message not of it.
   */
  async markRead(agent: AgentPrincipal, id: string, messageId?: string): Promise<ReadStateView> {
    const _id = parseObjectId(id);
    const conversation = _id
      ? await this.conversationRecords.findOnePlain(agent.companyId, { _id }, { inboundCount: 1, lastMessage: 1, assignedAgentId: 1 })
      : null;
    if (!_id || !conversation) throw new NotFoundException(`Conversation ${id} not found`);
    const me = toObjectId(agent.agentId);
    const to = messageId === undefined ? newestOf(conversation) : await this.positionOf(agent, _id, messageId);
    if (to) await this.markers.moveForward(agent.companyId, me, _id, to, this.clock.now());
    const marker = await this.markerOf(agent, _id);
    if (marker && conversation.assignedAgentId?.equals(me)) await this.conversationRecords.clearAssigneeUnread(agent.companyId, _id, me, marker.readCount);
    return {
      conversationId: id,
      lastReadMessageId: marker?.messageId.toHexString() ?? null,
      lastReadAt: isoTimeOrNull(marker?.readAt),
      unreadCount: unreadCountOf(conversation.inboundCount, marker),
    };
  }

  private markerOf(agent: AgentPrincipal, conversationId: Types.ObjectId) {
    return this.markers.markerOf(agent.companyId, toObjectId(agent.agentId), conversationId);
  }

  /** Where a marker at `messageId` stands; 400 when it is not a message of the conversation. */
  private async positionOf(agent: AgentPrincipal, conversationId: Types.ObjectId, messageId: string): Promise<ReadPosition> {
    const id = parseObjectId(messageId);
    const message = id ? await this.messages.findInConversation(agent.companyId, conversationId, id) : null;
    if (!message) throw new RequestValidationException([{ field: 'messageId', message: 'messageId is not a message of this conversation' }]);
    // Messages stored before they carried the count have it counted.
    const readCount = message.inboundCount ?? (await this.messages.countInboundUpTo(agent.companyId, message));
    return { messageId: message._id, messageAt: message.createdAt, readCount };
  }
}

/** A marker at the conversation's newest message (none before its first): as of that message, every inbound one is read. */
function newestOf(conversation: Stored<Conversation>): ReadPosition | null {
  const last = conversation.lastMessage;
  return last ? { messageId: last.id, messageAt: last.createdAt, readCount: conversation.inboundCount ?? 0 } : null;
}
