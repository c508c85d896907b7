import { Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import type { ConversationLastMessage } from './conversation.schema.js';
import { ConversationView } from './conversation.view.js';
import { ConversationsRepository, type MessageTarget, type RecordedMessage } from './conversations.repository.js';
import { ConversationsService } from './conversations.service.js';
import { wakePlan } from './snooze/snooze-changes.js';

/** A message just recorded on its conversation: the conversation after it, and its inbound count as of it. */
export interface MessageOnConversation {
  conversation: ConversationView;
  inboundCount: number;
}

/** What a new message does to its conversation: its counters and last message, its reply window, its snooze. */
@Injectable()
export class ConversationMessages {
  constructor(
    private readonly records: ConversationsRepository,
    private readonly conversations: ConversationsService,
  ) {}

  /**
   * Records a message on its conversation (see ConversationsRepository.recordMessage). Answers the conversation
   * after the change with its inbound count, or null when it is missing or closed, or its reply window refused the
   * message. The contact's message wakes a snoozed conversation, before the message itself is stored: a reply that
   * is stored never leaves its conversation asleep (a crash in between leaves it awake, and the connector's retry
   * stores the message).
   */
  async recordMessage(
    companyId: CompanyId,
    target: string | Exclude<MessageTarget, Types.ObjectId>,
    recorded: RecordedMessage,
  ): Promise<MessageOnConversation | null> {
    const resolved = typeof target === 'string' ? parseObjectId(target) : target;
    if (!resolved) return null;
    const updated = await this.records.recordMessage(companyId, resolved, recorded);
    if (!updated) return null;
    const inboundCount = updated.inboundCount ?? 0;
    if (recorded.last.senderType !== 'contact' || !updated.snoozedUntil) return { conversation: ConversationView.from(updated), inboundCount };
    const awake = await this.conversations.change(companyId, updated, (conversation) => wakePlan(conversation, 'contact_message', recorded.at));
    return { conversation: ConversationView.from(awake), inboundCount };
  }

  /** The satisfaction survey on a closed conversation awaiting its rating (see ConversationsRepository.recordSurveyMessage). */
  async recordSurveyMessage(companyId: CompanyId, id: string, last: ConversationLastMessage): Promise<MessageOnConversation | null> {
    const resolved = parseObjectId(id);
    const updated = resolved && (await this.records.recordSurveyMessage(companyId, resolved, last));
    return updated ? { conversation: ConversationView.from(updated), inboundCount: updated.inboundCount ?? 0 } : null;
  }
}
