import { BadRequestException, ConflictException, Injectable } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { isEmail } from 'class-validator';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';
import { contactCreated, contactUpdated, NAME_FIELDS } from './contact-events.js';
import { announceSummary } from './contact-summary-changed.js';
import { ContactsRepository, type ContactIdentityField } from './contacts.repository.js';
import { nameKeyOf } from './name-key.js';
import { normalizePhone } from './phone-number.js';

/** Who wrote in, as a channel reports it (e.g. the `from` of an inbound message). */
export interface ContactIdentity {
  phone?: string;
  email?: string;
  name?: string;
}

/** An identity as stored: an E.164 phone, a lower-cased e-mail, a trimmed name. */
export type NormalizedIdentity = ContactIdentity;

export const IDENTITY_FIELDS: ContactIdentityField[] = ['phone', 'email'];
/** The schema's limit; a channel's display name is cut to it rather than refusing the message. */
const MAX_NAME_LENGTH = 200;
/** How many merges a merged source's phone or e-mail is followed through to the contact that has it now. */
const MAX_MERGE_HOPS = 10;

export function phoneOrThrow(raw: string): string {
  const phone = normalizePhone(raw);
  if (!phone) {
    throw new RequestValidationException([
      { field: 'phone', message: 'phone must be a possible phone number in international format, e.g. +14155552671' },
    ]);
  }
  return phone;
}

export function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

export function normalizeField(field: (typeof NAME_FIELDS)[number], value: string): string {
  if (field === 'email') return normalizeEmail(value);
  if (field === 'phone') return phoneOrThrow(value);
  return value;
}

function normalizeIdentity(identity: ContactIdentity): NormalizedIdentity {
  const email = identity.email === undefined ? undefined : normalizeEmail(identity.email);
  if (email !== undefined && !isEmail(email)) {
    throw new RequestValidationException([{ field: 'email', message: 'email must be an e-mail address' }]);
  }
  return {
    phone: identity.phone === undefined ? undefined : phoneOrThrow(identity.phone),
    email,
    name: identity.name?.trim().slice(0, MAX_NAME_LENGTH) || undefined,
  };
}

/**
 * How a phone or an e-mail finds its contact (contract sections 4 and 22): the contact holding it, else the one a
 * merged source holding it was merged into, else a new one for a message from someone the company has not seen.
 * Contacts are unique within a company by e-mail and by phone (unique partial indexes), so of concurrent first
 * messages one creates the contact and the others find it.
 */
@Injectable()
export class ContactIdentities {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly emitter: EventEmitter2,
  ) {}

  /**
   * The contact with this phone, else with this e-mail, else a new one. Race-safe: when a
   * concurrent call creates the same contact first, the duplicate key sends this one back to read
   * the winner. A name, e-mail or phone the contact lacks is filled in, unless another contact
   * already holds that e-mail or phone. 400 when the phone or e-mail is malformed or both are missing.
   */
  async findOrCreateByIdentity(companyId: CompanyId, identity: ContactIdentity, channel: string | null = null): Promise<Stored<Contact>> {
    const normalized = normalizeIdentity(identity);
    if (!normalized.phone && !normalized.email) {
      throw new BadRequestException('A contact is identified by a phone or an e-mail: give at least one');
    }
    const existing = await this.findByIdentity(companyId, normalized);
    if (existing) return this.fillMissing(companyId, existing, normalized, channel);
    try {
      return await this.contacts.insertContact(
        companyId,
        { ...normalized, ...(nameKeyOf(normalized.name) ? { nameKey: nameKeyOf(normalized.name) } : {}), tags: [], attributes: {} },
        contactCreated(channel),
      );
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const winner = await this.findByIdentity(companyId, normalized);
      if (!winner) throw error;
      return this.fillMissing(companyId, winner, normalized, channel);
    }
  }

  /** The contact with this phone, else with this e-mail, or null; 400 when the phone or e-mail is malformed. */
  async findByIdentityOf(companyId: CompanyId, identity: ContactIdentity): Promise<Stored<Contact> | null> {
    return this.findByIdentity(companyId, normalizeIdentity(identity));
  }

  /** 409 naming the contact a merged source's e-mail or phone among `identity` leads to: it is that person's. */
  async refuseMerged(companyId: CompanyId, identity: Pick<NormalizedIdentity, ContactIdentityField>): Promise<void> {
    for (const field of IDENTITY_FIELDS) {
      const value = identity[field];
      const merged = value ? await this.contacts.findMergedByIdentity(companyId, field, value) : null;
      if (!merged) continue;
      const holder = (await this.followMerges(companyId, merged)) ?? merged;
      throw new ConflictException(`This ${field} belongs to contact ${holder._id.toHexString()} (a contact merged into it had it)`);
    }
  }

  /** The live contact a merged source now lives on, through later merges of its target; null when none is left. */
  private async followMerges(companyId: CompanyId, contact: Stored<Contact>): Promise<Stored<Contact> | null> {
    let current: Stored<Contact> | null = contact;
    for (let hop = 0; current?.mergedInto && hop < MAX_MERGE_HOPS; hop += 1) {
      current = await this.contacts.findById(companyId, current.mergedInto.toHexString());
    }
    return current && !current.mergedInto ? current : null;
  }

  /** The contact holding the phone, else the e-mail; else the one a merged source holding them was merged into. */
  private async findByIdentity(companyId: CompanyId, identity: NormalizedIdentity): Promise<Stored<Contact> | null> {
    for (const field of IDENTITY_FIELDS) {
      const value = identity[field];
      const found = value ? await this.contacts.findByIdentity(companyId, field, value) : null;
      if (found) return found;
    }
    for (const field of IDENTITY_FIELDS) {
      const value = identity[field];
      const merged = value ? await this.contacts.findMergedByIdentity(companyId, field, value) : null;
      const holder = merged && (await this.followMerges(companyId, merged));
      if (holder) return holder;
    }
    return null;
  }

  /** Writes only fields that are still empty, so a concurrent fill is never overwritten. */
  private async fillMissing(
    companyId: CompanyId,
    contact: Stored<Contact>,
    identity: NormalizedIdentity,
    channel: string | null,
  ): Promise<Stored<Contact>> {
    const fill: Partial<Contact> = {};
    if (!contact.name && identity.name) {
      fill.name = identity.name;
      const nameKey = nameKeyOf(identity.name);
      if (nameKey) fill.nameKey = nameKey;
    }
    for (const field of IDENTITY_FIELDS) {
      const value = identity[field];
      if (!contact[field] && value && !(await this.contacts.findByIdentity(companyId, field, value))) fill[field] = value;
    }
    const fields = Object.keys(fill).filter((field) => field !== 'nameKey');
    if (!fields.length) return contact;
    const stillEmpty = Object.fromEntries(fields.map((field) => [field, null]));
    try {
      const filled = await this.contacts.change(companyId, contact, stillEmpty, { $set: fill }, (after) =>
        contactUpdated(contact, after, null, channel),
      );
      if (filled) await announceSummary(this.emitter, companyId, filled);
      return filled ?? (await this.contacts.findOne(companyId, { _id: contact._id })) ?? contact;
    } catch (error) {
      // Another contact took that e-mail or phone meanwhile: this one stays as it was.
      if (isDuplicateKeyError(error)) return contact;
      throw error;
    }
  }
}
