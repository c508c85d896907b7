import { ApiProperty } from '@nestjs/swagger';
import { attributesView } from '../attributes/attribute-values.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';
import { contactSummaryOf } from './contact-summary-changed.js';

export class ContactView {
  /** @example 6650f0c2a1b2c3d4e5f60719 */
  id: string;
  /** @example "Grace Hopper" */
  name: string | null;
  /** @example grace@example.com */
  email: string | null;
  /** @example +15551234567 */
  phone: string | null;
  /** @example ["vip"] */
  tags: string[];
  /** Values of your contact attribute definitions; dates as ISO-8601. @example {"plan":"pro"} */
  @ApiProperty({ additionalProperties: true })
  attributes: Record<string, unknown>;
  /** Only on an erased contact (contract section 23): true, with name, e-mail, phone and attributes gone */
  erased?: true;
  erasedAt?: string;
  /** Only while an admin holds it: erasure answers 409 and retention skips it */
  legalHold?: true;
  createdAt: string;
  updatedAt: string;

  static from(contact: Stored<Contact>): ContactView {
    if (contact.erasedAt) {
      const at = contact.erasedAt.toISOString();
      return {
        id: contact._id.toHexString(),
        erased: true,
        erasedAt: at,
        name: null,
        email: null,
        phone: null,
        tags: [],
        attributes: {},
        createdAt: contact.createdAt.toISOString(),
        updatedAt: at,
      };
    }
    return {
      ...(contact.legalHold ? { legalHold: true as const } : {}),
      id: contact._id.toHexString(),
      name: contact.name ?? null,
      email: contact.email ?? null,
      phone: contact.phone ?? null,
      tags: contact.tags,
      attributes: attributesView(contact.attributes),
      createdAt: contact.createdAt.toISOString(),
      updatedAt: contact.updatedAt.toISOString(),
    };
  }
}

/** The stored fields ContactSummaryView shows (with `_id`): what a read made only for the summaries projects. */
export const CONTACT_SUMMARY_FIELDS = { name: 1, email: 1, phone: 1 } as const;

/** What a conversation embeds of its contact: enough to show who it is with. */
export class ContactSummaryView {
  /** @example 6650f0c2a1b2c3d4e5f60719 */
  id: string;
  /** @example "Grace Hopper" */
  name: string | null;
  /** @example grace@example.com */
  email: string | null;
  /** @example +15551234567 */
  phone: string | null;

  static from(contact: Pick<Stored<Contact>, '_id' | 'name' | 'email' | 'phone'>): ContactSummaryView {
    return { id: contact._id.toHexString(), ...contactSummaryOf(contact) };
  }
}

/** The answer of DELETE /v1/contacts/:id. */
export class DeletedContactView {
  /** @example 6650f0c2a1b2c3d4e5f60719 */
  id: string;
  /** @example true */
  deleted: true;
}

/** Contacts that may be one person (contract section 22), for a person to review and merge. */
export class DuplicateCandidatesView {
  /** Two or more contacts */
  contacts: ContactView[];
  /** Why they are candidates: `same_name` (equal ignoring case, accents and spaces, with no conflicting e-mail or phone) */
  reason: 'same_name';
}

export class DuplicateCandidatesPage {
  data: DuplicateCandidatesView[];
  /** Pass as `cursor` for the next page; null on the last */
  nextCursor: string | null;
}
