import { BadRequestException, Injectable } from '@nestjs/common';
import type { Page } from '../common/pagination/page.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { MediaLinks } from '../media/media-links.js';
import type { ListMessagesQueryDto } from './dto/list-messages-query.dto.js';
import { decodeMessageCursor, encodeMessageCursor } from './message-cursor.js';
import { MessageView } from './message.view.js';
import { MessagesRepository, type MessageWindow } from './messages.repository.js';
import { parseTimestamp } from './timestamp.js';

/** A conversation's messages, page by page in either direction (GET /v1/conversations/:id/messages). */
@Injectable()
export class MessageHistory {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly conversations: ConversationsService,
    private readonly links: MediaLinks,
  ) {}

  /**
   * Pages in ascending time order. Without `after`: the newest `limit` older than `before` (or
   * all), `nextCursor` going further back; with `after`: the oldest `limit` newer than it (up to
   * `before` if given), `nextCursor` going forward.
   */
  async list(companyId: CompanyId, conversationId: string, query: ListMessagesQueryDto): Promise<Page<MessageView>> {
    // A page with messages of the company under this id shows the conversation exists (conversations are never
    // deleted), so it is looked up only when the page is empty or the query refused: 404 before 400, as ever.
    const conversation = parseObjectId(conversationId) ?? (await this.conversations.idOrThrow(companyId, conversationId));
    let window: Omit<MessageWindow, 'limit'>;
    try {
      window = this.windowOf(query);
    } catch (refusal) {
      await this.conversations.idOrThrow(companyId, conversationId);
      throw refusal;
    }
    const rows = await this.messages.window(companyId, conversation, {
      ...window,
      limit: query.limit + 1,
    });
    if (rows.length === 0) await this.conversations.idOrThrow(companyId, conversationId);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    const nextCursor =
      rows.length > query.limit && last
        ? encodeMessageCursor({
            direction: window.direction,
            position: { createdAt: last.createdAt, id: last._id },
            until: window.until,
            private: window.private,
          })
        : null;
    if (window.direction === 'older') page.reverse();
    return { data: page.map((message) => this.links.forMessage(companyId, MessageView.from(message))), nextCursor };
  }

  private windowOf(query: ListMessagesQueryDto): Omit<MessageWindow, 'limit'> {
    if (query.cursor !== undefined) {
      if (query.before !== undefined || query.after !== undefined) {
        throw new BadRequestException('cursor already carries its position and bounds: send it without before or after');
      }
      const cursor = decodeMessageCursor(query.cursor);
      if (query.private !== undefined && query.private !== cursor.private) {
        throw new BadRequestException('cursor already carries its private filter: send it without private, or with the same one');
      }
      return { direction: cursor.direction, from: cursor.position, until: cursor.until, private: cursor.private };
    }
    const before = query.before === undefined ? null : parseTimestamp(query.before);
    const after = query.after === undefined ? null : parseTimestamp(query.after);
    if (!after) return { direction: 'older', from: before, until: null, private: query.private };
    if (before && before.getTime() <= after.getTime()) throw new BadRequestException('before must be later than after');
    return { direction: 'newer', from: after, until: before, private: query.private };
  }
}
