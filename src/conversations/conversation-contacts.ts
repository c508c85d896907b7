import { Injectable } from '@nestjs/common';
import type { Page } from '../common/pagination/page.js';
import type { ContactSummaryView } from '../contacts/contact.view.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import type { ConversationView, ConversationWithContactView } from './conversation.view.js';

/** Embeds each conversation's contact into the REST answers: one contacts query per answer, whatever its size. */
@Injectable()
export class ConversationContacts {
  constructor(private readonly contacts: ContactsService) {}

  async embed(companyId: CompanyId, conversations: ConversationView[]): Promise<ConversationWithContactView[]> {
    const contacts = await this.contactsOf(companyId, conversations);
    return conversations.map((conversation) => ({ ...conversation, contact: contacts.get(conversation.contactId) ?? null }));
  }

  async embedOne(companyId: CompanyId, conversation: ConversationView): Promise<ConversationWithContactView> {
    const [embedded] = await this.embed(companyId, [conversation]);
    return embedded;
  }

  /**
   * A list page's views are made for its answer alone (mapped from the read a moment ago, shared with nothing):
   * the contact is added to each in place, sparing a copy of every view of the page.
   */
  async embedPage(companyId: CompanyId, page: Page<ConversationView>): Promise<Page<ConversationWithContactView>> {
    const contacts = await this.contactsOf(companyId, page.data);
    for (const conversation of page.data as ConversationWithContactView[]) conversation.contact = contacts.get(conversation.contactId) ?? null;
    return page as Page<ConversationWithContactView>;
  }

  private contactsOf(companyId: CompanyId, conversations: ConversationView[]): Promise<Map<string, ContactSummaryView>> {
    return this.contacts.summaries(
      companyId,
      conversations.map((conversation) => conversation.contactId),
    );
  }
}
