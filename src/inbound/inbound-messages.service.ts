import { ConflictException, Injectable } from '@nestjs/common';
import { ContactsService } from '../contacts/contacts.service.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { MessagesService, type DeliveredMessage } from '../messages/messages.service.js';
import type { InboundMessageDto } from './dto/inbound-message.dto.js';

/** How often a message retries when the conversation it found is closed before the message lands. */
const DELIVERY_ATTEMPTS = 3;

/**
 * A message from a contact on a channel (Interface B): finds or creates the contact, finds its open
 * conversation on the channel or opens one (never two, even under concurrent messages), stores the
 * message. A closed conversation is never reopened: the message goes to a new one.
 */
@Injectable()
export class InboundMessagesService {
  constructor(
    private readonly contacts: ContactsService,
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
  ) {}

  async receive(companyId: CompanyId, dto: InboundMessageDto): Promise<DeliveredMessage> {
    const contact = await this.contacts.findOrCreateByIdentity(companyId, dto.from);
    for (let attempt = 0; attempt < DELIVERY_ATTEMPTS; attempt += 1) {
      const conversation = await this.conversations.findOrOpen(companyId, contact._id, dto.channel);
      const delivered = await this.messages.receive(companyId, conversation.id, contact._id.toHexString(), dto.text);
      if (delivered) return delivered;
    }
    throw new ConflictException('The conversation kept closing while the message was stored; send it again');
  }
}
