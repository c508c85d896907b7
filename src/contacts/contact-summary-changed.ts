import type { EventEmitter2 } from '@nestjs/event-emitter';
import type { Types } from 'mongoose';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';

/**
 * Emitted in-process (and awaited, with `emitAsync`) when a contact's name, e-mail or phone changed, or the contact
 * was deleted (`summary` null): whoever keeps a copy of the summary (conversations, ContactSummarySync) updates it
 * before the request that changed the contact answers.
 */
export const CONTACT_SUMMARY_CHANGED = 'contacts.summary-changed';

/** What is shown of a contact where it is named (a conversation's copy, a list row): whom, and how to reach them. */
export interface ContactSummary {
  name: string | null;
  email: string | null;
  phone: string | null;
}

export function contactSummaryOf(contact: { name?: string | null; email?: string | null; phone?: string | null }): ContactSummary {
  return { name: contact.name ?? null, email: contact.email ?? null, phone: contact.phone ?? null };
}

export interface ContactSummaryChange {
  companyId: string;
  contactId: Types.ObjectId;
  summary: ContactSummary | null;
}

/** Tells the copies' keepers a contact's summary changed (null: it was deleted), and waits for them. */
export async function announceSummary(
  emitter: EventEmitter2,
  companyId: CompanyId,
  contact: { _id: Types.ObjectId; name?: string | null; email?: string | null; phone?: string | null },
  deleted = false,
): Promise<void> {
  const summary = deleted ? null : contactSummaryOf(contact);
  await emitter.emitAsync(CONTACT_SUMMARY_CHANGED, { companyId: String(companyId), contactId: contact._id, summary } satisfies ContactSummaryChange);
}
