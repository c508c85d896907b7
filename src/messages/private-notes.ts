import { Injectable } from '@nestjs/common';
import { Types } from 'mongoose';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { causedBy, type EventCause } from '../events/event-cause.js';
import { stageEvent } from '../events/pending-event.schema.js';
import type { Message } from './message.schema.js';
import { MessageView } from './message.view.js';
import { MessagesRepository } from './messages.repository.js';

export interface NoteInput {
  text: string;
  /** Agent ids; each must be an active agent of the company. */
  mentions: string[];
}

/**
 * Private notes (contract section 15): messages for the team only (`direction: internal`, `private: true`). A note
 * never reaches the channel and never counts as the conversation's activity: it is stored on its own, with
 * `conversation.note_added` in the same write, and leaves the conversation untouched (no lastMessageAt, no
 * firstResponseAt, no delivery, no `message.sent`). Closed conversations take notes too.
 */
@Injectable()
export class PrivateNotes {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly conversations: ConversationsService,
    private readonly agents: AgentsRepository,
  ) {}

  /** 404 for a missing, malformed or foreign conversation; 400 naming `mentions` for one that is not an active agent. */
  async add(agent: AgentPrincipal, conversationId: string, input: NoteInput): Promise<MessageView> {
    return this.write(agent.companyId, conversationId, input, { senderType: 'agent', senderId: toObjectId(agent.agentId) });
  }

  /**
   * An automation rule's note (sender `bot`), once per `dedupeKey`: nothing when a note is stored under it. Its event
   * carries the rule's `cause`.
   */
  async addByRule(companyId: CompanyId, conversationId: string, text: string, options: { dedupeKey: string; cause: EventCause }): Promise<void> {
    if (await this.messages.existsWithDedupeKey(companyId, options.dedupeKey)) return;
    await this.write(companyId, conversationId, { text, mentions: [] }, { senderType: 'bot', senderId: null }, options);
  }

  private async write(
    companyId: CompanyId,
    conversationId: string,
    input: NoteInput,
    sender: Pick<Message, 'senderType' | 'senderId'>,
    options: { dedupeKey?: string; cause?: EventCause } = {},
  ): Promise<MessageView> {
    const conversation = await this.conversations.getOrThrow(companyId, conversationId);
    const mentions = await this.mentionable(companyId, input.mentions);
    const at = new Date();
    const record = {
      _id: new Types.ObjectId(),
      companyId: toObjectId(companyId),
      conversationId: toObjectId(conversation.id),
      channel: conversation.channel,
      direction: 'internal',
      type: 'text',
      text: input.text,
      caption: null,
      media: null,
      ...sender,
      private: true,
      mentions,
      createdAt: at,
      updatedAt: at,
      ...(options.dedupeKey ? { dedupeKey: options.dedupeKey } : {}),
    } as Stored<Message>;
    const message = MessageView.from(record);
    const event = causedBy(
      stageEvent('conversation.note_added', { message, conversation, mentions: message.mentions }, { occurredAt: at }),
      options.cause,
    );
    await this.messages.insert(companyId, record, [event]);
    return message;
  }

  private async mentionable(companyId: CompanyId, ids: string[]): Promise<Types.ObjectId[]> {
    if (ids.length === 0) return [];
    const wanted = ids.map((id) => toObjectId(id));
    const found = await this.agents.find(companyId, { _id: { $in: wanted }, isActive: true }, { projection: { _id: 1 } });
    const active = new Set(found.map((row) => row._id.toHexString()));
    const unknown = ids.filter((id) => !active.has(id.toLowerCase()));
    if (unknown.length > 0) {
      throw new RequestValidationException([
        { field: 'mentions', message: `mentions must be active agents of your company; these are not: ${unknown.join(', ')}` },
      ]);
    }
    return wanted;
  }
}
