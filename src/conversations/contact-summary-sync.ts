import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { OnEvent } from '@nestjs/event-emitter';
import { CONTACT_SUMMARY_CHANGED, contactSummaryOf, type ContactSummaryChange } from '../contacts/contact-summary-changed.js';
import { ContactsService } from '../contacts/contacts.service.js';
import { DataMigrations } from '../database/migrations/data-migrations.js';
import { ConversationsRepository } from './conversations.repository.js';

const BACKFILL_BATCH = 500;

/**
 * Keeps each conversation's copy of its contact (ConversationContact) in step with the contact: a changed name,
 * e-mail or phone is copied to every conversation of the contact before the change answers, so the next event tells
 * a connector the new number; a deleted contact leaves null. Conversations stored before the copy existed get it once.
 */
@Injectable()
export class ContactSummarySync implements OnApplicationBootstrap {
  constructor(
    private readonly conversations: ConversationsRepository,
    private readonly contacts: ContactsService,
    private readonly migrations: DataMigrations,
  ) {}

  @OnEvent(CONTACT_SUMMARY_CHANGED, { suppressErrors: false })
  async copy(change: ContactSummaryChange): Promise<void> {
    await this.conversations.setContact(change.companyId, change.contactId, change.summary);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.migrations.runOnce('conversations.contact', async () => {
      for (;;) {
        const missing = await this.conversations.withoutContactCopy(BACKFILL_BATCH);
        if (missing.length === 0) return;
        for (const { companyId, contactId } of missing) {
          const summary = (await this.contacts.summaries(companyId, [contactId.toHexString()])).get(contactId.toHexString());
          await this.conversations.setContact(companyId, contactId, summary ? contactSummaryOf(summary) : null);
        }
      }
    });
  }
}
