import type { Types } from 'mongoose';

/**
 * Emitted in-process (and awaited, with `emitAsync`) when a contact's name, e-mail or phone changed, or the contact
 * was deleted (`summary` null): whoever keeps a copy of the summary (conversations, ContactSummarySync) updates it
 * before the request that changed the contact answers.
 */
export const CONTACT_SUMMARY_CHANGED = 'contacts.summary-changed';

export interface ContactSummaryChange {
  companyId: string;
  contactId: Types.ObjectId;
  summary: { name: string | null; email: string | null; phone: string | null } | null;
}
