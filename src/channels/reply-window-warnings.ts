import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { EventPublisher } from '../events/event-publisher.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { SettingsService } from '../settings/settings.service.js';
import { ChannelsService } from './channels.service.js';
import { isReplyWindowOpen } from './reply-window.js';

/** The durable timer of a conversation's warning, keyed by the conversation id. */
export const REPLY_WINDOW_CLOSING = 'reply-window-closing';
const MINUTE_MS = 60_000;

interface WarningPayload {
  /** The end of the window the timer warns of (ISO-8601): a later inbound message moves the window, and the timer. */
  expiresAt: string;
}

/**
 * `conversation.reply_window_closing`, `replyWindowWarningMinutes` (settings) before a conversation's reply window
 * closes, once per window. Each inbound message that opens or extends a window (`message.received` with a
 * `replyWindowExpiresAt`) sets the conversation's durable timer to the new end, replacing the one the previous message
 * set: a consumer of the event log, so a crash after the message was stored delays the timer but never loses it.
 * When the timer fires, it warns only if the window it was set for is still the conversation's and still open.
 */
@Injectable()
@ConsumesEvents({ name: 'reply-window-warnings', types: ['message.received'] })
export class ReplyWindowWarnings implements EventHandler, OnModuleInit {
  constructor(
    private readonly timers: DurableTimers,
    private readonly settings: SettingsService,
    private readonly conversations: ConversationsRepository,
    private readonly channels: ChannelsService,
    private readonly events: EventPublisher,
  ) {}

  onModuleInit(): void {
    this.timers.register<WarningPayload>(REPLY_WINDOW_CLOSING, (timer) => this.warn(timer));
  }

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    // In log order, so the last window of each conversation in the batch is its latest.
    const windows = new Map<string, string>();
    for (const event of events) {
      const conversation = event.type === 'message.received' ? event.data.conversation : null;
      if (conversation?.replyWindowExpiresAt) windows.set(conversation.id, conversation.replyWindowExpiresAt);
    }
    if (windows.size === 0) return;
    const minutes = await this.settings.replyWindowWarningMinutes(companyId);
    for (const [conversationId, expiresAt] of windows) {
      const dueAt = new Date(new Date(expiresAt).getTime() - minutes * MINUTE_MS);
      await this.timers.set(companyId, REPLY_WINDOW_CLOSING, conversationId, dueAt, { expiresAt } satisfies WarningPayload);
    }
  }

  /**
   * Warns of the window the timer was set for, if it is still the conversation's (no later message moved it), still
   * open (a warning after the close says nothing), and the channel still has a window. The event's id is the
   * window's, so a timer that fires again after a crash logs nothing new.
   */
  private async warn(timer: FiredTimer<WarningPayload>): Promise<void> {
    const conversation = await this.conversations.findById(timer.companyId, timer.key);
    const expiresAt = conversation?.replyWindowExpiresAt;
    if (!conversation?.isOpen || expiresAt?.toISOString() !== timer.payload.expiresAt) return;
    if (!isReplyWindowOpen(expiresAt, timer.firedAt)) return;
    if ((await this.channels.replyWindowHours(timer.companyId, conversation.channel)) === null) return;
    await this.events.publish(
      timer.companyId,
      'conversation.reply_window_closing',
      { conversation: ConversationView.from(conversation), closesAt: timer.payload.expiresAt },
      { id: `evt_${timer.key}_window_${expiresAt.getTime()}`, occurredAt: timer.firedAt },
    );
  }
}
