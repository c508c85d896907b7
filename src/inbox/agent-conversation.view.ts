import { isoTime } from '../common/iso-time.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationView } from '../conversations/conversation.view.js';
import type { ReadMarker } from '../conversations/read-marker.schema.js';

/** What a view of the caller needs of its read marker on a conversation (none: it never read it). */
export type MarkerSummary = Pick<ReadMarker, 'readCount' | 'readAt'> | undefined;

/** Inbound messages past the reader's marker: `inboundCount` is the conversation's counter (absent: none yet). */
export function unreadCountOf(inboundCount: number | undefined, marker: Pick<ReadMarker, 'readCount'> | null | undefined): number {
  return Math.max(0, (inboundCount ?? 0) - (marker?.readCount ?? 0));
}

/**
 * A conversation as the calling agent sees it in REST answers: the conversation, and how far that agent has read
 * it. Events and webhooks carry ConversationView, which has no reader.
 */
export class AgentConversationView extends ConversationView {
  /**
   * Inbound messages after your read marker (all of them when you never marked it read)
   * @example 2
   */
  unreadCount: number;
  /** When you last moved your read marker on it (`POST /v1/conversations/:id/read`); null when you never did */
  lastReadAt: string | null;

  /** `view` with the reader's state: `inboundCount` is the conversation's counter as of the view. */
  static of(view: ConversationView, inboundCount: number, marker: MarkerSummary): AgentConversationView {
    return {
      ...view,
      unreadCount: unreadCountOf(inboundCount, marker),
      lastReadAt: marker ? isoTime(marker.readAt) : null,
    };
  }

  static fromStored(conversation: Stored<Conversation>, marker: MarkerSummary): AgentConversationView {
    // The view is new: the reader's fields are added to it in place (a copy of 20 fields costs as much as the view).
    const view = ConversationView.from(conversation) as AgentConversationView;
    view.unreadCount = unreadCountOf(conversation.inboundCount, marker);
    view.lastReadAt = marker ? isoTime(marker.readAt) : null;
    return view;
  }
}

/** Where your read marker on a conversation stands. */
export class ReadStateView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  conversationId: string;
  /**
   * The newest message you have read; null while you have read none (a conversation without messages)
   * @example 6650f0c2a1b2c3d4e5f60721
   */
  lastReadMessageId: string | null;
  /** When you moved the marker there; null while you have read none */
  lastReadAt: string | null;
  /**
   * Inbound messages after the marker
   * @example 0
   */
  unreadCount: number;
}
