import { ConflictException, Injectable } from '@nestjs/common';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { ChannelsService } from '../channels/channels.service.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { Contact } from '../contacts/contact.schema.js';
import { ContactView } from '../contacts/contact.view.js';
import { ContactIdentities, type ContactIdentity } from '../contacts/contact-identities.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import { channelOf } from '../channels/channel-key.js';
import { ConversationOpenings } from '../conversations/conversation-openings.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { MessageTemplatesService } from '../message-templates/message-templates.service.js';
import { proactiveMessageModeOf, type ProactiveMessageDto, type ProactiveRecipientDto } from './dto/proactive-message.dto.js';
import type { MessageView } from './message.view.js';
import { MessagesService, type OutboundSender } from './messages.service.js';

/** What a proactive message answers: the message, its conversation as it stands after it, and the contact. */
export interface ProactiveMessageResult {
  message: MessageView;
  conversation: ConversationView;
  contact: ContactView;
}

/**
 * A message the company starts (contract section 17): to a contact by id, phone or e-mail (found, or created), in its
 * open conversation on the channel or a new one assigned to the sender (`human`). Everything that can refuse it is
 * checked before anything is stored: the channel, the template, the contact id, and the reply window (a new
 * conversation has none open, so on a channel with a window only a template goes); a refused message leaves no
 * contact and no conversation behind.
 */
@Injectable()
export class ProactiveMessagesService {
  constructor(
    private readonly channels: ChannelsService,
    private readonly contacts: ContactsService,
    private readonly identities: ContactIdentities,
    private readonly conversations: ConversationsService,
    private readonly openings: ConversationOpenings,
    private readonly templates: MessageTemplatesService,
    private readonly messages: MessagesService,
  ) {}

  async send(agent: AgentPrincipal, dto: ProactiveMessageDto): Promise<ProactiveMessageResult> {
    const { companyId } = agent;
    const mode = proactiveMessageModeOf(dto);
    const channel = channelOf(dto.channel);
    if ((await this.channels.find(companyId, channel))?.isActive === false) {
      throw new ConflictException(`Channel ${channel} is inactive: proactive messages cannot be sent on it (PATCH /v1/channels/{id} isActive)`);
    }
    const template = mode === 'template' ? await this.templates.prepare(companyId, channel, dto.template!) : null;
    const identity = this.identityOf(dto);
    const known = await this.existingContact(companyId, dto.to, identity);
    let conversation = known ? await this.conversations.findOpen(companyId, known._id, channel) : null;
    if (!template) {
      const refusal = await this.messages.freeFormRefusal(companyId, channel, conversation);
      if (refusal) throw refusal;
    }

    const contact = identity ? await this.identities.findOrCreateByIdentity(companyId, identity, channel) : known!;
    conversation ??= await this.openings.openAssigned(companyId, contact, channel, agent.agentId);
    const sender: OutboundSender = { type: 'agent', id: agent.agentId };
    const sent = template
      ? await this.messages.sendPreparedTemplate(companyId, conversation.id, template, sender)
      : await this.messages.sendText(companyId, conversation.id, dto.text!, sender);
    return { ...sent, contact: ContactView.from(contact) };
  }

  /** The phone or e-mail (and name) to find or create the contact by; null when `to` names a contact by id. */
  private identityOf(dto: ProactiveMessageDto): ContactIdentity | null {
    if (dto.to.contactId !== undefined) {
      if (dto.name !== undefined) {
        throw new RequestValidationException([{ field: 'name', message: 'name is only for a contact found or created by to.phone or to.email' }]);
      }
      return null;
    }
    return { phone: dto.to.phone, email: dto.to.email, name: dto.name };
  }

  /** The contact `to` names, if it exists: 400 for an unknown contact id or a malformed phone or e-mail. */
  private async existingContact(companyId: CompanyId, to: ProactiveRecipientDto, identity: ContactIdentity | null): Promise<Stored<Contact> | null> {
    if (!identity) {
      const contact = await this.contacts.findById(companyId, to.contactId!);
      if (!contact) throw new RequestValidationException([{ field: 'to.contactId', message: 'contact not found' }]);
      return contact;
    }
    try {
      return await this.identities.findByIdentityOf(companyId, identity);
    } catch (error) {
      if (!(error instanceof RequestValidationException)) throw error;
      throw new RequestValidationException(error.problems.map((problem) => ({ field: `to.${problem.field}`, message: `to.${problem.message}` })));
    }
  }
}
