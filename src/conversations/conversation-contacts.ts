import { Injectable } from '@nestjs/common';
import type { Page } from '../common/pagination/page.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import type { ConversationView, ConversationWithContactView } from './conversation.view.js';

/** Embeds each conversation's contact into the REST answers: one contacts query per answer, whatever its size. */
@Injectable()
export class ConversationContacts {
  constructor(private readonly contacts: ContactsService) {}

  async embed(companyId: CompanyId, conversations: ConversationView[]): Promise<ConversationWithContactView[]> {
    const contacts = await this.contacts.summaries(
      companyId,
      conversations.map((conversation) => conversation.contactId),
    );
    return conversations.map((conversation) => ({ ...conversation, contact: contacts.get(conversation.contactId) ?? null }));
  }

  async embedOne(companyId: CompanyId, conversation: ConversationView): Promise<ConversationWithContactView> {
    const [embedded] = await this.embed(companyId, [conversation]);
    return embedded;
  }

  async embedPage(companyId: CompanyId, page: Page<ConversationView>): Promise<Page<ConversationWithContactView>> {
    return { data: await this.embed(companyId, page.data), nextCursor: page.nextCursor };
  }
}
