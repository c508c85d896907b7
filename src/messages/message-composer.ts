import { Injectable } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { AgentPrincipal } from '../auth/auth-principal.js';
import { CannedResponsesService } from '../canned-responses/canned-responses.service.js';
import type { PlaceholderValues } from '../canned-responses/placeholders.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { CompaniesService } from '../companies/companies.service.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import type { SendMessageDto } from './dto/send-message.dto.js';
import { MAX_MESSAGE_TEXT_LENGTH } from './message.schema.js';
import type { MessageView } from './message.view.js';
import { MessagesService } from './messages.service.js';
import { PrivateNotes } from './private-notes.js';
import { sendModeOf, type SendMode } from './send-modes.js';

/**
 * What an agent posts to POST /conversations/:id/messages, by mode (send-modes.ts): a text message to the contact, a
 * private note, a canned response rendered for the conversation and sent as text, or an approved template by name.
 */
@Injectable()
export class MessageComposer {
  constructor(
    private readonly messages: MessagesService,
    private readonly notes: PrivateNotes,
    private readonly cannedResponses: CannedResponsesService,
    private readonly conversations: ConversationsService,
    private readonly agents: AgentsRepository,
    private readonly companies: CompaniesService,
  ) {}

  async send(agent: AgentPrincipal, conversationId: string, dto: SendMessageDto): Promise<MessageView> {
    const sender = { type: 'agent', id: agent.agentId } as const;
    switch (await this.modeOf(agent, conversationId, dto)) {
      case 'text':
        if (dto.private) return this.notes.add(agent, conversationId, { text: dto.text!, mentions: dto.mentions ?? [] });
        return (await this.messages.sendText(agent.companyId, conversationId, dto.text!, sender)).message;
      case 'cannedResponseId': {
        const text = await this.renderCanned(agent, conversationId, dto.cannedResponseId!);
        return (await this.messages.sendText(agent.companyId, conversationId, text, sender)).message;
      }
      case 'template':
        return (await this.messages.sendTemplate(agent.companyId, conversationId, dto.template!, sender)).message;
    }
  }

  /** The body's mode; a refused body answers 404 first when the conversation is not the company's, as ever. */
  private async modeOf(agent: AgentPrincipal, conversationId: string, dto: SendMessageDto): Promise<SendMode> {
    try {
      return sendModeOf(dto);
    } catch (refusal) {
      await this.conversations.idOrThrow(agent.companyId, conversationId);
      throw refusal;
    }
  }

  /** 404 for a foreign conversation, then 400 naming `cannedResponseId` for a foreign response or a text too long. */
  private async renderCanned(agent: AgentPrincipal, conversationId: string, cannedResponseId: string): Promise<string> {
    const { companyId } = agent;
    const conversation = await this.conversations.getOrThrow(companyId, conversationId);
    // The conversation's copy of its contact is kept with every change of the contact (null once it is deleted).
    const contact = conversation.contact;
    const [sender, company] = await Promise.all([
      this.agents.findById(companyId, agent.agentId, { name: 1 }),
      this.companies.findById(companyId),
    ]);
    const values: PlaceholderValues = {
      'contact.name': contact?.name,
      'contact.phone': contact?.phone,
      'contact.email': contact?.email,
      'agent.name': sender?.name,
      'company.name': company?.name,
    };
    const text = await this.cannedResponses.render(companyId, cannedResponseId, values, 'cannedResponseId');
    if (text.length === 0 || text.length > MAX_MESSAGE_TEXT_LENGTH) {
      throw new RequestValidationException([
        {
          field: 'cannedResponseId',
          message: `the canned response renders to ${text.length} characters for this conversation; a message has 1 to ${MAX_MESSAGE_TEXT_LENGTH}`,
        },
      ]);
    }
    return text;
  }
}
