import { Injectable, Logger } from '@nestjs/common';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { toObjectId } from '../database/object-id.js';
import { ConsumesEvents, type EventHandler } from '../events/consumers/consumes-events.decorator.js';
import type { AnyDomainEvent, DomainEvent } from '../events/domain-events.js';
import { MessagesService } from '../messages/messages.service.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import { CSAT_WINDOW_MS } from './csat.js';

/**
 * The satisfaction survey on close, as a consumer of the event log: the conversation is made to await a rating for
 * CSAT_WINDOW_MS from its close, then the bot sends the survey text on it. A closed conversation refuses messages;
 * the survey is the exception, allowed only while the conversation awaits its rating (MessagesService's `survey`),
 * so it goes out after the close, through the ordinary message path (`message.sent`, delivery receipts). Keyed by
 * the conversation (`dedupeKey`): sent once. A refused send (a reply window closed: 409) is skipped.
 */
@Injectable()
@ConsumesEvents({ name: 'csat-surveys', types: ['conversation.closed'] })
export class CsatSurveysConsumer implements EventHandler {
  private readonly logger = new Logger(CsatSurveysConsumer.name);

  constructor(
    private readonly settings: SettingsRepository,
    private readonly conversations: ConversationsRepository,
    private readonly messages: MessagesService,
  ) {}

  async handle(companyId: string, events: AnyDomainEvent[]): Promise<void> {
    const closes = events.filter((event): event is DomainEvent<'conversation.closed'> => event.type === 'conversation.closed');
    if (closes.length === 0) return;
    const { csat } = await this.settings.forCompany(companyId);
    if (!csat?.enabled || !csat.message) return;
    for (const event of closes) await this.survey(companyId, event, csat.message);
  }

  private async survey(companyId: string, event: DomainEvent<'conversation.closed'>, text: string): Promise<void> {
    const { conversation } = event.data;
    const requestedAt = new Date(conversation.closedAt ?? event.occurredAt);
    const expiresAt = new Date(requestedAt.getTime() + CSAT_WINDOW_MS);
    const dedupeKey = `csat:${conversation.id}`;
    await this.conversations.requestCsat(companyId, toObjectId(conversation.id), { requestedAt, expiresAt, rating: null, comment: null, submittedAt: null });
    const refused = await this.messages.sendBotTextOnce(companyId, conversation.id, text, dedupeKey, { survey: true });
    if (refused) this.logger.log(`CSAT survey of conversation ${conversation.id} skipped: ${refused}`);
  }
}
