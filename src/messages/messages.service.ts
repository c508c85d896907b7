import { causedBy, type EventCause } from '../events/event-cause.js';
import { BadRequestException, ConflictException, HttpException, Injectable } from '@nestjs/common';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { channelOf } from '../channels/channel-key.js';
import { ChannelsService } from '../channels/channels.service.js';
import { isReplyWindowOpen, replyWindowEnd, ReplyWindowClosedException } from '../channels/reply-window.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import type { RecordedMessage } from '../conversations/conversations.repository.js';
import { ConversationMessages } from '../conversations/conversation-messages.js';
import { ConversationOpenings } from '../conversations/conversation-openings.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { CreateConversationDto } from '../conversations/dto/create-conversation.dto.js';
import { Types } from 'mongoose';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import type { SendTemplateDto } from '../message-templates/dto/send-template.dto.js';
import { MessageTemplatesService, type PreparedTemplate } from '../message-templates/message-templates.service.js';
import { lastMessageOf } from './message-preview.js';
import type { MediaType, Message, MessageDirection, MessageMedia } from './message.schema.js';
import { MessageView } from './message.view.js';
import { MessagesRepository } from './messages.repository.js';

/** Who sends an outbound message: an agent, or a bot (a flow, by its id, or anonymous). */
export interface OutboundSender {
  type: 'agent' | 'bot';
  id: string | null;
}

/**
 * What makes a send repeatable without a second message: its `dedupeKey` (a second send with it is refused
 * as a duplicate key) and the id of its event.
 */
export interface SendOptions {
  dedupeKey?: string;
  eventId?: string;
  /** An automation rule's send: its event carries it in its data. */
  cause?: EventCause;
  /** The satisfaction survey: sent on the closed conversation awaiting its rating (the one message a closed one takes). */
  survey?: boolean;
}

export interface SendMediaInput {
  conversationId: string;
  type: MediaType;
  caption?: string;
  media: MessageMedia;
}

type MessageDraft = Pick<Message, 'direction' | 'type' | 'text' | 'caption' | 'media' | 'template' | 'senderType' | 'senderId' | 'externalId'>;

/** What the conversation's reply window has to do with a message (see ConversationsRepository.recordMessage). */
type WindowEffect = Pick<RecordedMessage, 'windowedChannels'> & { replyWindowHours?: number | null };

/**
 * What a contact sent: a text, or a file the connector uploaded (its kind, its stored file, a caption and maybe a
 * text too), and the channel's own id of the message when the connector gave one.
 */
export interface InboundInput {
  text?: string;
  media?: { type: MediaType; file: MessageMedia; caption?: string };
  externalId?: string;
}

export function messageEventName(direction: MessageDirection): 'message.received' | 'message.sent' {
  return direction === 'inbound' ? 'message.received' : 'message.sent';
}

/** A stored message with its conversation as it stands after the message. */
export interface DeliveredMessage {
  message: MessageView;
  conversation: ConversationView;
}

/**
 * Messages of a conversation. A message is stored only in an open conversation: the conversation
 * is updated first (lastMessageAt, firstResponseAt on the first agent message) with a filter on isOpen, then the message is
 * stored with that same time and, in the same write, its `message.sent` or `message.received` event.
 *
 * Every outbound message passes here, so the reply window (contract section 17) is kept here for all of them: a
 * free-form message (text, media, canned response, flow or bot message) on a channel with a window is recorded only
 * while the window is open, by a condition of the same write (no read of the conversation first); otherwise 409
 * `reply-window-closed`. Templates go through at any time. An inbound message moves the window in its write.
 */
@Injectable()
export class MessagesService {
  constructor(
    private readonly messages: MessagesRepository,
    private readonly conversations: ConversationsService,
    private readonly openings: ConversationOpenings,
    private readonly conversationMessages: ConversationMessages,
    private readonly channels: ChannelsService,
    private readonly templates: MessageTemplatesService,
    private readonly clock: Clock,
  ) {}

  /**
   * An agent-initiated conversation (contract section 4), with `message` as its first outbound
   * message when given. Answers the conversation as it stands after that message. A new conversation has no open
   * reply window, so on a channel with one `message` is refused (409) before anything is stored.
   */
  async startConversation(agent: AgentPrincipal, dto: CreateConversationDto): Promise<ConversationView> {
    const { message, ...input } = dto;
    if (message !== undefined) {
      const refusal = await this.freeFormRefusal(agent.companyId, channelOf(input.channel), null);
      if (refusal) throw refusal;
    }
    const conversation = await this.openings.open(agent.companyId, input);
    if (message === undefined) return conversation;
    const sent = await this.sendText(agent.companyId, conversation.id, message, { type: 'agent', id: agent.agentId });
    return sent.conversation;
  }

  /** 404 for a missing, malformed or foreign conversation (a path id); 400 when it is closed; 409 outside its reply window. */
  async sendText(
    companyId: CompanyId,
    conversationId: string,
    text: string,
    sender: OutboundSender,
    options: SendOptions = {},
  ): Promise<DeliveredMessage> {
    const draft = {
      direction: 'outbound',
      type: 'text',
      text,
      caption: null,
      media: null,
      senderType: sender.type,
      senderId: sender.id ? toObjectId(sender.id) : null,
    } as const;
    return this.sendFreeForm(companyId, conversationId, draft, options, async () => {
      await this.conversations.getOrThrow(companyId, conversationId);
    });
  }

  /**
   * The bot's text, sent once however often a reaction asks (`dedupeKey` is unique): nothing when a message is stored
   * under the key, or lands meanwhile from another process. A send the API refuses (a closed conversation, a reply
   * window closed: a 4xx) is skipped, never retried: answers why; null otherwise.
   */
  async sendBotTextOnce(companyId: CompanyId, conversationId: string, text: string, dedupeKey: string, options: Pick<SendOptions, 'survey'> = {}): Promise<string | null> {
    if (await this.messages.existsWithDedupeKey(companyId, dedupeKey)) return null;
    try {
      await this.sendText(companyId, conversationId, text, { type: 'bot', id: null }, { ...options, dedupeKey });
      return null;
    } catch (error) {
      if (isDuplicateKeyError(error)) return null;
      if (error instanceof HttpException && error.getStatus() < 500) return error.message;
      throw error;
    }
  }

  /**
   * An approved template of the conversation's channel, by name (contract section 17): allowed whatever the reply
   * window. 404 for a missing, malformed or foreign conversation; 400 when it is closed, or for an unknown or
   * unapproved template or a wrong number of variables.
   */
  async sendTemplate(
    companyId: CompanyId,
    conversationId: string,
    use: SendTemplateDto,
    sender: OutboundSender,
    options: SendOptions = {},
  ): Promise<DeliveredMessage> {
    const conversation = await this.conversations.getOrThrow(companyId, conversationId);
    if (conversation.status === 'closed') throw this.closed(conversationId);
    return this.sendPreparedTemplate(companyId, conversation.id, await this.templates.prepare(companyId, conversation.channel, use), sender, options);
  }

  /** A template `prepare`d for the conversation's channel. */
  async sendPreparedTemplate(
    companyId: CompanyId,
    conversationId: string,
    prepared: PreparedTemplate,
    sender: OutboundSender,
    options: SendOptions = {},
  ): Promise<DeliveredMessage> {
    const draft: MessageDraft = {
      direction: 'outbound',
      type: 'template',
      text: prepared.text,
      caption: null,
      media: null,
      template: prepared.template,
      senderType: sender.type,
      senderId: sender.id ? toObjectId(sender.id) : null,
    };
    const sent = await this.append(companyId, conversationId, draft, options);
    if (sent) return sent;
    await this.conversations.getOrThrow(companyId, conversationId);
    throw this.closed(conversationId);
  }

  /**
   * A media message whose file the caller has already stored. `conversationId` comes from a
   * request body, so a missing, malformed or foreign one is a 400; a closed conversation too; 409 outside its reply window.
   */
  async sendMedia(agent: AgentPrincipal, input: SendMediaInput): Promise<MessageView> {
    const draft = {
      direction: 'outbound',
      type: input.type,
      text: null,
      caption: input.caption ?? null,
      media: input.media,
      senderType: 'agent',
      senderId: toObjectId(agent.agentId),
    } as const;
    const sent = await this.sendFreeForm(agent.companyId, input.conversationId, draft, {}, () => {
      throw new RequestValidationException([{ field: 'conversationId', message: 'conversation not found' }]);
    });
    return sent.message;
  }

  /**
   * The 409 a free-form message to `conversation` (null: one not opened yet) on `channel` would meet now, or null
   * when it may go: the channel has no reply window, or the conversation's is open.
   */
  async freeFormRefusal(companyId: CompanyId, channel: string, conversation: ConversationView | null): Promise<ReplyWindowClosedException | null> {
    if ((await this.channels.replyWindowHours(companyId, channel)) === null) return null;
    const expiresAt = conversation?.replyWindowExpiresAt ? new Date(conversation.replyWindowExpiresAt) : null;
    if (isReplyWindowOpen(expiresAt, this.clock.now())) return null;
    return new ReplyWindowClosedException({ conversationId: conversation?.id ?? null, channel }, expiresAt);
  }

  /**
   * An inbound message from the contact, into its open conversation on the channel (found by the write that
   * records the message on it). Null when it has none: the caller then opens one and tries again.
   * A duplicate key error when a message with the same `externalId` on the channel, or with the same file, was
   * stored meanwhile.
   */
  async receive(companyId: CompanyId, contactId: Types.ObjectId, channel: string, input: InboundInput): Promise<DeliveredMessage | null> {
    const replyWindowHours = await this.channels.replyWindowHours(companyId, channel);
    return this.append(companyId, { contactId, channel }, {
      direction: 'inbound',
      type: input.media?.type ?? 'text',
      text: input.text ?? null,
      caption: input.media?.caption ?? null,
      media: input.media?.file ?? null,
      senderType: 'contact',
      senderId: contactId,
      externalId: input.externalId,
    }, {}, { replyWindowHours });
  }

  /** The inbound message with this channel id, with its conversation as it stands now; null when there is none. */
  async findByExternalId(companyId: CompanyId, channel: string, externalId: string): Promise<DeliveredMessage | null> {
    const stored = await this.messages.findByExternalId(companyId, channel, externalId);
    if (!stored) return null;
    return { message: MessageView.from(stored), conversation: await this.conversations.getOrThrow(companyId, stored.conversationId.toHexString()) };
  }

  /**
   * A free-form outbound message: recorded only while the conversation's reply window is open, if its channel has
   * one. When it is not recorded, says why: `missing` throws for a missing conversation; closed 400; window 409.
   */
  private async sendFreeForm(
    companyId: CompanyId,
    conversationId: string,
    draft: MessageDraft,
    options: SendOptions,
    missing: () => Promise<void> | void,
  ): Promise<DeliveredMessage> {
    const windowedChannels = await this.channels.windowedKeys(companyId);
    const sent = await this.append(companyId, conversationId, draft, options, { windowedChannels });
    if (sent) return sent;
    const conversation = await this.conversations.find(companyId, conversationId);
    if (!conversation) await missing();
    if (!conversation || conversation.status === 'closed') throw this.closed(conversationId);
    const refusal = await this.freeFormRefusal(companyId, conversation.channel, conversation);
    // Refused for a window that a message from the contact has opened since: nothing was stored, so a retry is safe.
    throw refusal ?? new ConflictException(`Conversation ${conversationId} changed while the message was stored; send it again`);
  }

  private async append(
    companyId: CompanyId,
    target: Parameters<ConversationMessages['recordMessage']>[1],
    draft: MessageDraft,
    options: SendOptions = {},
    window: WindowEffect = {},
  ): Promise<DeliveredMessage | null> {
    // The Clock's time, as every deadline measured from a message (SLA clocks) is. The message's id and time are
    // chosen here: the conversation records it as its lastMessage (and lastMessageAt) in the write that finds it, so
    // the two always agree, and its event, written with it, shows it exactly as stored.
    const at = this.clock.now();
    const _id = new Types.ObjectId();
    const last = lastMessageOf(_id, draft, at);
    const recorded =
      options.survey && typeof target === 'string'
        ? await this.conversationMessages.recordSurveyMessage(companyId, target, last)
        : await this.conversationMessages.recordMessage(companyId, target, {
            at,
            // Bot messages and auto-replies are no answer: only an agent's message is a response.
            isResponse: draft.senderType === 'agent',
            last,
            windowedChannels: window.windowedChannels,
            opensReplyWindowUntil: window.replyWindowHours ? replyWindowEnd(at, window.replyWindowHours) : undefined,
          });
    if (!recorded) return null;
    const { conversation, inboundCount } = recorded;
    const record = {
      ...draft,
      _id,
      companyId: toObjectId(companyId),
      conversationId: toObjectId(conversation.id),
      channel: conversation.channel,
      inboundCount,
      private: false,
      createdAt: at,
      updatedAt: at,
      ...(draft.direction === 'outbound' ? { delivery: { status: 'pending', updatedAt: at } } : {}),
      ...(options.dedupeKey ? { dedupeKey: options.dedupeKey } : {}),
    } as Stored<Message>;
    const message = MessageView.from(record);
    const event = causedBy(stageEvent(messageEventName(draft.direction), { message, conversation }, { id: options.eventId, occurredAt: at }), options.cause);
    await this.messages.insert(companyId, record, [event]);
    return { message, conversation };
  }

  private closed(conversationId: string): BadRequestException {
    return new BadRequestException(`Conversation ${conversationId} is closed; messages cannot be added to it`);
  }
}
