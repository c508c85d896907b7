import { BadRequestException, ConflictException, ForbiddenException, GoneException, Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { isEmail } from 'class-validator';
import type { UpdateQuery } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { duplicateKeyField, isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';
import { CONTACT_SUMMARY_CHANGED, contactSummaryOf, type ContactSummaryChange } from './contact-summary-changed.js';
import { contactListFilter } from './contact-search.js';
import { CONTACT_SUMMARY_FIELDS, ContactSummaryView, ContactView, DeletedContactView } from './contact.view.js';
import { ContactsRepository, type ContactIdentityField } from './contacts.repository.js';
import type { CreateContactDto } from './dto/create-contact.dto.js';
import type { ListContactsQueryDto } from './dto/list-contacts-query.dto.js';
import type { UpdateContactDto } from './dto/update-contact.dto.js';
import { normalizePhone } from './phone-number.js';
import { stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import type { Role } from '../auth/auth-principal.js';
import { roleAllows } from '../auth/guards/permissions.guard.js';

/** Who wrote in, as a channel reports it (e.g. the `from` of an inbound message). */
export interface ContactIdentity {
  phone?: string;
  email?: string;
  name?: string;
}

interface NormalizedIdentity {
  phone?: string;
  email?: string;
  name?: string;
}

const IDENTITY_FIELDS: ContactIdentityField[] = ['phone', 'email'];
/** The schema's limit; a channel's display name is cut to it rather than refusing the message. */
const MAX_NAME_LENGTH = 200;
const NAME_FIELDS = ['name', 'email', 'phone'] as const;

function invalidPhone(): RequestValidationException {
  return new RequestValidationException([
    { field: 'phone', message: 'phone must be a possible phone number in international format, e.g. +14155552671' },
  ]);
}

function phoneOrThrow(raw: string): string {
  const phone = normalizePhone(raw);
  if (!phone) throw invalidPhone();
  return phone;
}

function normalizeEmail(raw: string): string {
  return raw.trim().toLowerCase();
}

function normalizeField(field: (typeof NAME_FIELDS)[number], value: string): string {
  if (field === 'email') return normalizeEmail(value);
  if (field === 'phone') return phoneOrThrow(value);
  return value;
}

/**
 * Contacts are unique within a company by e-mail and by phone (unique partial indexes), so a
 * duplicate is refused by the database itself, also between concurrent requests.
 */
@Injectable()
export class ContactsService {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly emitter: EventEmitter2,
    private readonly audit: AuditTrail,
  ) {}

  /** A malformed, missing or foreign id answers null. */
  async findById(companyId: CompanyId, id: string): Promise<Stored<Contact> | null> {
    return this.contacts.findById(companyId, id);
  }

  /** The summaries of these contacts by id, in one query; a deleted contact is missing from the map. */
  async summaries(companyId: CompanyId, ids: string[]): Promise<Map<string, ContactSummaryView>> {
    const objectIds = [...new Set(ids)].map((id) => parseObjectId(id)).filter((id) => id !== null);
    if (objectIds.length === 0) return new Map();
    const contacts = await this.contacts.findPlain(
      companyId,
      { _id: { $in: objectIds } },
      // Ids are unique: the limit changes nothing but lets the read be one command (see findPlain).
      { projection: CONTACT_SUMMARY_FIELDS, limit: objectIds.length },
    );
    return new Map(contacts.map((contact) => [contact._id.toHexString(), ContactSummaryView.from(contact)]));
  }

  /**
   * The contact with this phone, else with this e-mail, else a new one. Race-safe: when a
   * concurrent call creates the same contact first, the duplicate key sends this one back to read
   * the winner. A name, e-mail or phone the contact lacks is filled in, unless another contact
   * already holds that e-mail or phone. 400 when the phone or e-mail is malformed or both are missing.
   */
  async findOrCreateByIdentity(companyId: CompanyId, identity: ContactIdentity): Promise<Stored<Contact>> {
    const normalized = this.normalizeIdentity(identity);
    if (!normalized.phone && !normalized.email) {
      throw new BadRequestException('A contact is identified by a phone or an e-mail: give at least one');
    }
    const existing = await this.findByIdentity(companyId, normalized);
    if (existing) return this.fillMissing(companyId, existing, normalized);
    try {
      return await this.contacts.create(companyId, { ...normalized, tags: [], attributes: {} });
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const winner = await this.findByIdentity(companyId, normalized);
      if (!winner) throw error;
      return this.fillMissing(companyId, winner, normalized);
    }
  }

  /** The contact with this phone, else with this e-mail, or null; 400 when the phone or e-mail is malformed. */
  async findByIdentityOf(companyId: CompanyId, identity: ContactIdentity): Promise<Stored<Contact> | null> {
    return this.findByIdentity(companyId, this.normalizeIdentity(identity));
  }

  async list(companyId: CompanyId, query: ListContactsQueryDto): Promise<Page<ContactView>> {
    const filter = contactListFilter({ search: query.search, tags: query.tags });
    const page = await this.contacts.page(companyId, filter, { limit: query.limit, cursor: query.cursor });
    return mapPage(page, ContactView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<ContactView> {
    return ContactView.from(await this.existing(companyId, id));
  }

  async create(companyId: CompanyId, dto: CreateContactDto): Promise<ContactView> {
    const identity: NormalizedIdentity = {
      name: dto.name,
      email: dto.email === undefined ? undefined : normalizeEmail(dto.email),
      phone: dto.phone === undefined ? undefined : phoneOrThrow(dto.phone),
    };
    if (!identity.name && !identity.email && !identity.phone) {
      throw new BadRequestException('A contact needs at least one of name, email or phone');
    }
    try {
      const created = await this.contacts.create(companyId, {
        ...identity,
        tags: dto.tags ?? [],
        attributes: dto.attributes ?? {},
      });
      return ContactView.from(created);
    } catch (error) {
      throw this.conflictOr(error);
    }
  }

  /** Only the fields sent change; null clears name, e-mail or phone, but one of them must remain. */
  /**
   * `legalHold` needs an admin (403 otherwise) and is audited by field name; an erased contact answers 410.
   */
  async update(companyId: CompanyId, id: string, dto: UpdateContactDto, caller?: { role: Role; origin: AuditOrigin }): Promise<ContactView> {
    if (dto.legalHold !== undefined && caller && !roleAllows(caller.role, 'admin')) throw new ForbiddenException('Only admins may set a legal hold');
    const existing = await this.existing(companyId, id);
    if (existing.erasedAt) throw new GoneException(`Contact ${id} has been erased`);
    const set: Partial<Contact> = {};
    const unset: Partial<Record<keyof Contact, 1>> = {};
    for (const field of NAME_FIELDS) {
      const value = dto[field];
      if (value === null) unset[field] = 1;
      else if (value !== undefined) set[field] = normalizeField(field, value);
    }
    if (dto.tags) set.tags = dto.tags;
    if (dto.attributes) set.attributes = dto.attributes;
    if (dto.legalHold !== undefined) set.legalHold = dto.legalHold;

    const remains = dto.legalHold !== undefined && Object.keys(set).length === 1 && Object.keys(unset).length === 0 ? true : NAME_FIELDS.some((field) => set[field] !== undefined || (!unset[field] && existing[field]));
    if (!remains) throw new BadRequestException('A contact needs at least one of name, email or phone');

    const update: UpdateQuery<Contact> = {};
    if (Object.keys(set).length) update.$set = set;
    if (Object.keys(unset).length) update.$unset = unset;
    if (!update.$set && !update.$unset) return ContactView.from(existing);
    const entry =
      caller && dto.legalHold !== undefined && dto.legalHold !== (existing.legalHold ?? false)
        ? stageAudit(caller.origin, 'contact.legal_hold_changed', { type: 'contact', id }, { legalHold: [existing.legalHold ?? false, dto.legalHold] })
        : null;
    let updated: Stored<Contact> | null;
    try {
      updated = await this.contacts.updateOne(companyId, { _id: existing._id, erasedAt: { $exists: false } }, entry ? withAudit(update, entry) : update);
    } catch (error) {
      throw this.conflictOr(error);
    }
    if (!updated) throw this.notFound(id);
    if (entry) this.audit.written(companyId, this.contacts.collectionName, existing._id, [entry]);
    // Also when the values are the same: a retry of a request that died before the copies were updated heals them.
    if (NAME_FIELDS.some((field) => field in set || field in unset)) await this.summaryChanged(companyId, updated);
    return ContactView.from(updated);
  }

  /**
   * Deletes the contact record only: its conversations and messages stay, as history, still
   * pointing at the deleted contact's id. A later inbound message from the same phone or e-mail
   * creates a new contact (and so a new conversation).
   */
  async remove(companyId: CompanyId, id: string): Promise<DeletedContactView> {
    const _id = parseObjectId(id);
    if (!_id || !(await this.contacts.deleteOne(companyId, { _id, erasedAt: { $exists: false } }))) {
      if (_id && (await this.contacts.findOne(companyId, { _id }, { _id: 1 }))) throw new GoneException(`Contact ${id} has been erased`);
      throw this.notFound(id);
    }
    await this.emitter.emitAsync(CONTACT_SUMMARY_CHANGED, { companyId: String(companyId), contactId: _id, summary: null } satisfies ContactSummaryChange);
    return { id: _id.toHexString(), deleted: true };
  }

  private async summaryChanged(companyId: CompanyId, contact: Stored<Contact>): Promise<void> {
    const summary = contactSummaryOf(contact);
    await this.emitter.emitAsync(CONTACT_SUMMARY_CHANGED, { companyId: String(companyId), contactId: contact._id, summary } satisfies ContactSummaryChange);
  }

  private async existing(companyId: CompanyId, id: string): Promise<Stored<Contact>> {
    const contact = await this.contacts.findById(companyId, id);
    if (!contact) throw this.notFound(id);
    return contact;
  }

  private notFound(id: string): NotFoundException {
    return new NotFoundException(`Contact ${id} not found`);
  }

  private conflictOr(error: unknown): unknown {
    if (!isDuplicateKeyError(error)) return error;
    const field = duplicateKeyField(error);
    return new ConflictException(`A contact with this ${field ?? 'email or phone'} already exists in your company`);
  }

  private normalizeIdentity(identity: ContactIdentity): NormalizedIdentity {
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

  private async findByIdentity(companyId: CompanyId, identity: NormalizedIdentity): Promise<Stored<Contact> | null> {
    for (const field of IDENTITY_FIELDS) {
      const value = identity[field];
      const found = value ? await this.contacts.findByIdentity(companyId, field, value) : null;
      if (found) return found;
    }
    return null;
  }

  /** Writes only fields that are still empty, so a concurrent fill is never overwritten. */
  private async fillMissing(
    companyId: CompanyId,
    contact: Stored<Contact>,
    identity: NormalizedIdentity,
  ): Promise<Stored<Contact>> {
    const fill: Partial<Contact> = {};
    if (!contact.name && identity.name) fill.name = identity.name;
    for (const field of IDENTITY_FIELDS) {
      const value = identity[field];
      if (!contact[field] && value && !(await this.contacts.findByIdentity(companyId, field, value))) fill[field] = value;
    }
    const fields = Object.keys(fill);
    if (!fields.length) return contact;
    const stillEmpty = Object.fromEntries(fields.map((field) => [field, null]));
    try {
      const filled = await this.contacts.updateOne(companyId, { _id: contact._id, ...stillEmpty }, { $set: fill });
      if (filled) await this.summaryChanged(companyId, filled);
      return filled ?? (await this.contacts.findOne(companyId, { _id: contact._id })) ?? contact;
    } catch (error) {
      // Another contact took that e-mail or phone meanwhile: this one stays as it was.
      if (isDuplicateKeyError(error)) return contact;
      throw error;
    }
  }
}
