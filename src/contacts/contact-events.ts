import { attributeChanges, type AttributePatch } from '../attributes/attribute-values.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { FieldChanges } from '../events/domain-events.js';
import { stageEvent } from '../events/pending-event.schema.js';
import type { Contact } from './contact.schema.js';
import { ContactView } from './contact.view.js';

/** A contact's fields that name and reach it: one of them must remain. */
export const NAME_FIELDS = ['name', 'email', 'phone'] as const;

/**
 * The event of a new contact, showing it as stored. One a channel's message created is filed under that channel, so a
 * key limited to other channels does not see it (contract section 13); one created through the API reaches every key.
 */
export const contactCreated =
  (channel: string | null = null) =>
  (record: Stored<Contact>) => [stageEvent('contact.created', { contact: ContactView.from(record) }, { occurredAt: record.createdAt, channel })];

/** `contact.updated` with what changed: the named fields, and the attributes as `attributes.<key>` (none: no event). */
export function contactUpdated(before: Stored<Contact>, after: Stored<Contact>, patch: AttributePatch | null, channel: string | null = null) {
  const changes: FieldChanges = {};
  for (const field of [...NAME_FIELDS, 'tags'] as const) {
    const was = before[field] ?? null;
    const now = after[field] ?? null;
    if (JSON.stringify(was) !== JSON.stringify(now)) changes[field] = [was, now];
  }
  if (patch) Object.assign(changes, attributeChanges(before.attributes, patch));
  if (Object.keys(changes).length === 0) return [];
  return [stageEvent('contact.updated', { contact: ContactView.from(after), changes }, { occurredAt: after.updatedAt, channel })];
}
