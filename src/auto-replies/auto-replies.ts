import { Injectable, Logger } from '@nestjs/common';
import { BusinessHoursService } from '../business-hours/business-hours.service.js';
import { toObjectId } from '../database/object-id.js';
import type { DomainEvent } from '../events/domain-events.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { MessagesService } from '../messages/messages.service.js';
import { SettingsRepository } from '../settings/settings.repository.js';

/**
 * The welcome and out-of-hours replies (contract section 16), sent by the bot as ordinary outbound messages
 * (`message.sent`, delivery receipts) in reaction to `message.received` (InboundFlowsConsumer, before the flows):
 * - `welcomeMessage` on the contact's message that begins a conversation (its first message);
 * - `outOfHoursMessage` on a contact's message while business hours are enabled and closed (at the message's time),
 *   at most once per conversation and closed period.
 * Each is keyed (`dedupeKey`, unique) by the conversation, and the closed period by the opening that ends it, so
 * however often a message is handled (a retry after a crash) each reply is sent once. Refused sends are skipped, never retried: a closed conversation (400), or a reply
 * window that does not allow free-form messages (409).
 */
@Injectable()
export class AutoReplies {
  private readonly logger = new Logger(AutoReplies.name);

  constructor(
    private readonly settings: SettingsRepository,
    private readonly businessHours: BusinessHoursService,
    private readonly messages: MessagesService,
    private readonly messageRecords: MessagesRepository,
  ) {}

  async replyTo(companyId: string, event: DomainEvent<'message.received'>): Promise<void> {
    const { message, conversation } = event.data;
    const settings = await this.settings.forCompany(companyId);
    const at = new Date(message.createdAt);
    if (settings.welcomeMessage) {
      const first = !(await this.messageRecords.hasEarlierMessage(companyId, toObjectId(conversation.id), { id: toObjectId(message.id), createdAt: at }));
      if (first) await this.send(companyId, conversation.id, settings.welcomeMessage, `auto-reply:welcome:${conversation.id}`);
    }
    if (settings.outOfHoursMessage) {
      const calendar = await this.businessHours.calendar(companyId);
      if (calendar.enabled && !calendar.isOpen(at)) {
        const reopens = calendar.nextChange(at)?.getTime() ?? 'never';
        await this.send(companyId, conversation.id, settings.outOfHoursMessage, `auto-reply:out-of-hours:${conversation.id}:${reopens}`);
      }
    }
  }

  private async send(companyId: string, conversationId: string, text: string, dedupeKey: string): Promise<void> {
    const refused = await this.messages.sendBotTextOnce(companyId, conversationId, text, dedupeKey);
    if (refused) this.logger.log(`Auto-reply ${dedupeKey} skipped: ${refused}`);
  }
}
