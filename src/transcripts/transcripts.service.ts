import { Injectable } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import { ContactView } from '../contacts/contact.view.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import type { MessagePosition } from '../messages/message-cursor.js';
import type { SenderType } from '../messages/message.schema.js';
import { MessageView } from '../messages/message.view.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { SettingsRepository } from '../settings/settings.repository.js';
import type { TranscriptQueryDto } from './dto/transcript-query.dto.js';
import { transcriptLine } from './transcript-format.js';
import type { TranscriptMessageView } from './transcript.view.js';

/** Messages read per query: a transcript of any length is written page by page, never held whole. */
const PAGE_SIZE = 200;
const BOT_NAME = 'Bot';

/** A transcript ready to be written: its content type, and its body as chunks read as they are written. */
export interface Transcript {
  contentType: string;
  fileName: string;
  chunks: AsyncIterable<string>;
}

/**
 * Conversation transcripts (contract section 15), text or JSON. Everything that can refuse the request (a foreign
 * conversation) is checked before the first chunk; the messages are then read a page at a time, oldest first, so
 * memory stays bounded whatever the conversation's length.
 */
@Injectable()
export class TranscriptsService {
  constructor(
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesRepository,
    private readonly contacts: ContactsService,
    private readonly agents: AgentsRepository,
    private readonly settings: SettingsRepository,
  ) {}

  /** 404 for a missing, malformed or foreign conversation. */
  async open(companyId: CompanyId, conversationId: string, query: TranscriptQueryDto): Promise<Transcript> {
    const conversation = await this.conversations.getOrThrow(companyId, conversationId);
    const [contact, settings] = await Promise.all([
      this.contacts.findById(companyId, conversation.contactId),
      this.settings.forCompany(companyId),
    ]);
    const contactView = contact ? ContactView.from(contact) : null;
    const messages = this.messagesOf(companyId, conversation, contactView, query.includePrivate);
    const fileName = `conversation-${conversation.id}.${query.format === 'json' ? 'json' : 'txt'}`;
    if (query.format === 'json') return { contentType: 'application/json; charset=utf-8', fileName, chunks: jsonChunks(conversation, contactView, messages) };
    return { contentType: 'text/plain; charset=utf-8', fileName, chunks: textChunks(messages, settings.timezone) };
  }

  /** The conversation's messages with their senders' names, oldest first, a page per item. */
  private async *messagesOf(
    companyId: CompanyId,
    conversation: ConversationView,
    contact: ContactView | null,
    includePrivate: boolean,
  ): AsyncGenerator<TranscriptMessageView[]> {
    const conversationId = toObjectId(conversation.id);
    const contactName = contact?.name ?? contact?.phone ?? contact?.email ?? 'Contact';
    const agentNames = new Map<string, string>();
    let from: MessagePosition | null = null;
    for (;;) {
      const rows = await this.messages.window(companyId, conversationId, {
        direction: 'newer',
        from,
        until: null,
        limit: PAGE_SIZE,
        private: includePrivate ? undefined : false,
      });
      if (rows.length === 0) return;
      const page = rows.map((row) => MessageView.from(row));
      await this.learnAgentNames(companyId, page, agentNames);
      yield page.map((message) => ({ ...message, senderName: senderName(message, contactName, agentNames) }));
      if (rows.length < PAGE_SIZE) return;
      const last = rows[rows.length - 1];
      from = { createdAt: last.createdAt, id: last._id };
    }
  }

  /** Adds the names of the page's agents not known yet, in one query. */
  private async learnAgentNames(companyId: CompanyId, page: MessageView[], names: Map<string, string>): Promise<void> {
    const unknown = new Set(page.filter((message) => message.senderType === 'agent' && message.senderId && !names.has(message.senderId)).map((message) => message.senderId!));
    if (unknown.size === 0) return;
    const agents = await this.agents.find(companyId, { _id: { $in: [...unknown].map((id) => toObjectId(id)) } }, { projection: { name: 1 } });
    for (const agent of agents) names.set(agent._id.toHexString(), agent.name);
    // A sender no longer on record keeps a placeholder, so it is not looked up again on every page.
    for (const id of unknown) if (!names.has(id)) names.set(id, 'Agent');
  }
}

function senderName(message: MessageView, contactName: string, agentNames: Map<string, string>): string {
  const kinds: Record<SenderType, () => string> = {
    contact: () => contactName,
    agent: () => (message.senderId ? agentNames.get(message.senderId) : undefined) ?? 'Agent',
    bot: () => BOT_NAME,
  };
  return kinds[message.senderType]();
}

async function* textChunks(pages: AsyncIterable<TranscriptMessageView[]>, timeZone: string): AsyncGenerator<string> {
  for await (const page of pages) {
    yield page.map((message) => transcriptLine(message, { name: message.senderName, type: message.senderType }, timeZone)).join('');
  }
}

async function* jsonChunks(conversation: ConversationView, contact: ContactView | null, pages: AsyncIterable<TranscriptMessageView[]>): AsyncGenerator<string> {
  yield `{"conversation":${JSON.stringify(conversation)},"contact":${JSON.stringify(contact)},"messages":[`;
  let first = true;
  for await (const page of pages) {
    const items = page.map((message) => JSON.stringify(message)).join(',');
    yield first ? items : `,${items}`;
    first = false;
  }
  yield ']}';
}
