import { ConflictException, Injectable } from '@nestjs/common';
import { channelOf } from '../channels/channel-key.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { Contact } from '../contacts/contact.schema.js';
import { contactSummaryOf } from '../contacts/contact-summary-changed.js';
import { ContactsService } from '../contacts/contacts.service.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import type { Priority } from './conversation.schema.js';
import { ConversationView } from './conversation.view.js';
import { ConversationsRepository, type NewConversation } from './conversations.repository.js';

export interface OpenConversationInput {
  contactId: string;
  channel?: string;
  subject?: string;
  priority?: Priority;
}

/**
 * How conversations begin: by an agent, by the contact's first message, by a proactive message. The partial unique
 * index on open conversations admits one per contact and channel, so each way says what a concurrent opening means
 * to it; each writes `conversation.created` with the conversation.
 */
@Injectable()
export class ConversationOpenings {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly contacts: ContactsService,
  ) {}

  /**
   * Opens a conversation with a contact of the company (agent-initiated): `bot`, priority `medium`
   * unless given. 400 when the contact is not the company's, 409 when the contact already has an
   * open conversation on the channel.
   */
  async open(companyId: CompanyId, input: OpenConversationInput): Promise<ConversationView> {
    const contact = await this.contacts.findById(companyId, input.contactId);
    if (!contact) {
      throw new RequestValidationException([{ field: 'contactId', message: 'contact not found' }]);
    }
    const channel = channelOf(input.channel);
    try {
      return await this.create(companyId, {
        contactId: contact._id,
        contact: contactSummaryOf(contact),
        channel,
        subject: input.subject ?? null,
        priority: input.priority ?? 'medium',
      });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const existing = await this.conversations.findOpen(companyId, contact._id, channel);
      throw new ConflictException(
        `Contact ${input.contactId} already has an open conversation on channel ${channel}` +
          (existing ? ` (${existing._id.toHexString()})` : ''),
      );
    }
  }

  /**
   * Opens a conversation in `bot` with the contact on the channel, unless one is open: of concurrent calls one opens
   * it (and writes `conversation.created`) and the others find it refused, which is what they wanted. The caller,
   * which has just found none open, looks again.
   */
  async openIfNone(companyId: CompanyId, contact: Stored<Contact>, channel?: string): Promise<void> {
    try {
      await this.create(companyId, { contactId: contact._id, contact: contactSummaryOf(contact), channel: channelOf(channel) });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
    }
  }

  /**
   * Opens a conversation with the contact on the channel, assigned to the agent who starts it (`human`), as a
   * proactive message does: `conversation.created` and `conversation.assigned` in its write. When one is open
   * already (a concurrent call opened it), answers that one as it is.
   */
  async openAssigned(companyId: CompanyId, contact: Stored<Contact>, channel: string, agentId: string): Promise<ConversationView> {
    const agent = toObjectId(agentId);
    const contactId = contact._id;
    try {
      const stored = await this.conversations.insert(
        companyId,
        { contactId, contact: contactSummaryOf(contact), channel, status: 'human', assignedAgentId: agent, assignedAt: new Date(), assignedBy: { kind: 'agent', id: agent } },
        (conversation) => {
          const snapshot = ConversationView.from(conversation);
          return [
            stageEvent('conversation.created', { conversation: snapshot }, { occurredAt: conversation.createdAt }),
            stageEvent('conversation.assigned', { conversation: snapshot, agentId, previousAgentId: null }, { occurredAt: conversation.createdAt }),
          ];
        },
      );
      return ConversationView.from(stored);
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const open = await this.conversations.findOpen(companyId, contactId, channel);
      if (!open) throw new ConflictException(`The contact's conversation on channel ${channel} was closed meanwhile; send again`);
      return ConversationView.from(open);
    }
  }

  private async create(companyId: CompanyId, data: NewConversation): Promise<ConversationView> {
    const stored = await this.conversations.insert(companyId, data, (conversation) => [
      stageEvent('conversation.created', { conversation: ConversationView.from(conversation) }, { occurredAt: conversation.createdAt }),
    ]);
    return ConversationView.from(stored);
  }
}
