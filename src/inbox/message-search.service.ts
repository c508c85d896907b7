import { Injectable } from '@nestjs/common';
import type { QueryFilter, Types } from 'mongoose';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { Page } from '../common/pagination/page.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { LISTED_CONVERSATION_FIELDS } from '../conversations/conversation.view.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { parseObjectId } from '../database/object-id.js';
import { MediaLinks } from '../media/media-links.js';
import type { Message } from '../messages/message.schema.js';
import { MessageView } from '../messages/message.view.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { parseTimestamp } from '../messages/timestamp.js';
import type { AgentConversationView } from './agent-conversation.view.js';
import type { SearchMessagesQueryDto } from './dto/search-messages-query.dto.js';
import { InboxService } from './inbox.service.js';
import { decodeSearchCursor, encodeSearchCursor, textSearchOf } from './message-search-query.js';
import type { MessageSearchHitView } from './message-search.view.js';

const EMPTY: Page<MessageSearchHitView> = { data: [], nextCursor: null };

/**
 * Message search (contract section 14): the company's messages (text and captions, private notes included) holding
 * every word of `q`, newest first, on the `message_search` text index led by the company; each hit with its
 * conversation as the caller sees it. A page costs the search, one read of its conversations and one of the
 * caller's markers on them.
 */
@Injectable()
export class MessageSearchService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly conversations: ConversationsService,
    private readonly conversationRecords: ConversationsRepository,
    private readonly inbox: InboxService,
    private readonly links: MediaLinks,
  ) {}

  async search(agent: AgentPrincipal, query: SearchMessagesQueryDto): Promise<Page<MessageSearchHitView>> {
    const position = query.cursor === undefined ? null : decodeSearchCursor(query.cursor);
    const filter = await this.filterOf(agent, query);
    if (!filter) return EMPTY;
    if (position) {
      filter.createdAt = { ...filter.createdAt, $lte: position.createdAt };
      filter.$or = [{ createdAt: { $lt: position.createdAt } }, { _id: { $lt: position.id } }];
    }
    const rows = await this.messages.search(agent.companyId, filter, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const nextCursor = rows.length > query.limit && last ? encodeSearchCursor({ createdAt: last.createdAt, id: last._id }) : null;
    const conversations = await this.conversationsOf(agent, page);
    return {
      data: page.map((message) => ({
        message: this.links.forMessage(agent.companyId, MessageView.from(message)),
        conversation: conversations.get(message.conversationId.toHexString())!,
      })),
      nextCursor,
    };
  }

  /** The search's filter on stored types; null when nothing can match (no word, or no conversation of the contact). */
  private async filterOf(agent: AgentPrincipal, query: SearchMessagesQueryDto): Promise<QueryFilter<Message> | null> {
    const search = textSearchOf(query.q);
    if (!search) return null;
    const filter: QueryFilter<Message> = { $text: { $search: search } };
    const conversationIds: Types.ObjectId[][] = [];
    if (query.conversationId) conversationIds.push([parseObjectId(query.conversationId)!]);
    if (query.contactId) conversationIds.push(await this.conversations.idsOfContact(agent.companyId, query.contactId));
    if (conversationIds.length) {
      const [first, ...others] = conversationIds;
      const allowed = first.filter((id) => others.every((list) => list.some((other) => other.equals(id))));
      if (allowed.length === 0) return null;
      filter.conversationId = allowed.length === 1 ? allowed[0] : { $in: allowed };
    }
    if (query.channel) filter.channel = query.channel;
    const after = query.after === undefined ? null : parseTimestamp(query.after);
    const before = query.before === undefined ? null : parseTimestamp(query.before);
    if (after && before && before.getTime() <= after.getTime()) {
      throw new RequestValidationException([{ field: 'before', message: 'before must be later than after' }]);
    }
    if (after || before) filter.createdAt = { ...(after ? { $gt: after } : {}), ...(before ? { $lt: before } : {}) };
    return filter;
  }

  /** The page's conversations as the caller sees them, by id. */
  private async conversationsOf(agent: AgentPrincipal, messages: { conversationId: Types.ObjectId }[]): Promise<Map<string, AgentConversationView>> {
    const ids = [...new Map(messages.map((m) => [m.conversationId.toHexString(), m.conversationId])).values()];
    if (ids.length === 0) return new Map();
    const stored = await this.conversationRecords.findPlain(agent.companyId, { _id: { $in: ids } }, { projection: LISTED_CONVERSATION_FIELDS, limit: ids.length });
    const views = await this.inbox.forAgent(agent, stored);
    return new Map(views.map((view) => [view.id, view]));
  }
}
