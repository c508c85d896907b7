import { BadRequestException, ConflictException, ForbiddenException, GoneException, Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { attributeUpdate } from '../attributes/attribute-values.js';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import { stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import type { Role } from '../auth/auth-principal.js';
import { roleAllows } from '../auth/guards/permissions.guard.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { duplicateKeyField, isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { Contact } from './contact.schema.js';
import { contactCreated, contactUpdated, NAME_FIELDS } from './contact-events.js';
import { ContactIdentities, normalizeEmail, normalizeField, phoneOrThrow, type ContactIdentity } from './contact-identities.js';
import { ContactMergedException } from './contact-merged.exception.js';
import { contactListFilter } from './contact-search.js';
import { announceSummary } from './contact-summary-changed.js';
import { CONTACT_SUMMARY_FIELDS, ContactSummaryView, ContactView, DeletedContactView } from './contact.view.js';
import { ContactsRepository, LIVE_CONTACT, type ContactUpdate } from './contacts.repository.js';
import type { CreateContactDto } from './dto/create-contact.dto.js';
import type { ListContactsQueryDto } from './dto/list-contacts-query.dto.js';
import type { UpdateContactDto } from './dto/update-contact.dto.js';
import { nameKeyOf } from './name-key.js';

/** How many times a change is computed again when the contact moved under it (then 409). */
const CHANGE_ATTEMPTS = 5;
/** The 403 of a legal hold set by a supervisor or an agent (contract section 23). */
export const LEGAL_HOLD_NEEDS_ADMIN = 'Only admins may set or lift a legal hold';

/**
 * Contacts are unique within a company by e-mail and by phone (unique partial indexes), so a
 * duplicate is refused by the database itself, also between concurrent requests.
 */
@Injectable()
export class ContactsService {
  constructor(
    private readonly contacts: ContactsRepository,
    private readonly emitter: EventEmitter2,
    private readonly attributes: AttributeDefinitionsService,
    private readonly audit: AuditTrail,
    private readonly identities: ContactIdentities,
  ) {}

  /** A malformed, missing or foreign id, or a merged source's, answers null. */
  async findById(companyId: CompanyId, id: string): Promise<Stored<Contact> | null> {
    const contact = await this.contacts.findById(companyId, id);
    return contact && !contact.mergedInto ? contact : null;
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

  async list(companyId: CompanyId, query: ListContactsQueryDto): Promise<Page<ContactView>> {
    const filter = { ...contactListFilter({ search: query.search, tags: query.tags }), ...LIVE_CONTACT };
    const page = await this.contacts.page(companyId, filter, { limit: query.limit, cursor: query.cursor });
    return mapPage(page, ContactView.from);
  }

  async get(companyId: CompanyId, id: string): Promise<ContactView> {
    return ContactView.from(await this.existing(companyId, id));
  }

  async create(companyId: CompanyId, dto: CreateContactDto): Promise<ContactView> {
    const identity: ContactIdentity = {
      name: dto.name,
      email: dto.email === undefined ? undefined : normalizeEmail(dto.email),
      phone: dto.phone === undefined ? undefined : phoneOrThrow(dto.phone),
    };
    if (!identity.name && !identity.email && !identity.phone) {
      throw new BadRequestException('A contact needs at least one of name, email or phone');
    }
    const patch = await this.attributes.checkPatch(companyId, 'contact', dto.attributes);
    await this.identities.refuseMerged(companyId, identity);
    try {
      const stored = await this.contacts.insertContact(
        companyId,
        { ...identity, ...(nameKeyOf(identity.name) ? { nameKey: nameKeyOf(identity.name) } : {}), tags: dto.tags ?? [], attributes: patch?.set ?? {} },
        contactCreated(),
      );
      return ContactView.from(stored);
    } catch (error) {
      throw this.conflictOr(error);
    }
  }

  /**
   * Only the fields sent change; null clears name, e-mail or phone, but one of them must remain. `attributes` merge:
   * null removes a key. A change emits `contact.updated` with what changed; nothing changed emits nothing.
   * `legalHold` needs an admin (403 otherwise) and is audited by field name; an erased contact answers 410.
   */
  async update(companyId: CompanyId, id: string, dto: UpdateContactDto, caller?: { role: Role; origin: AuditOrigin }): Promise<ContactView> {
    if (dto.legalHold !== undefined && caller && !roleAllows(caller.role, 'admin')) throw new ForbiddenException(LEGAL_HOLD_NEEDS_ADMIN);
    let current = await this.existing(companyId, id);
    if (current.erasedAt) throw new GoneException(`Contact ${id} has been erased`);
    const patch = await this.attributes.checkPatch(companyId, 'contact', dto.attributes ?? undefined);
    const set: Record<string, unknown> = {};
    const unset: Record<string, 1> = {};
    for (const field of NAME_FIELDS) {
      const value = dto[field];
      if (value === null) unset[field] = 1;
      else if (value !== undefined) set[field] = normalizeField(field, value);
    }
    if (dto.tags) set.tags = dto.tags;
    if (dto.legalHold !== undefined) set.legalHold = dto.legalHold;
    const nameKey = set.name === undefined ? undefined : nameKeyOf(set.name as string);
    if (nameKey) set.nameKey = nameKey;
    else if (unset.name || set.name !== undefined) unset.nameKey = 1;
    const attributeWrites = patch ? attributeUpdate(patch) : {};
    const update: ContactUpdate = {};
    if (Object.keys(set).length || attributeWrites.$set) update.$set = { ...set, ...attributeWrites.$set };
    if (Object.keys(unset).length || attributeWrites.$unset) update.$unset = { ...unset, ...attributeWrites.$unset };
    const onlyLegalHold = dto.legalHold !== undefined && Object.keys(set).length === 1 && Object.keys(unset).length === 0 && !patch;
    for (let attempt = 1; ; attempt += 1) {
      const existing = current;
      const remains = onlyLegalHold || NAME_FIELDS.some((field) => set[field] !== undefined || (!unset[field] && existing[field]));
      if (!remains) throw new BadRequestException('A contact needs at least one of name, email or phone');
      if (!update.$set && !update.$unset) return ContactView.from(existing);
      const entry =
        caller && dto.legalHold !== undefined && dto.legalHold !== (existing.legalHold ?? false)
          ? stageAudit(caller.origin, 'contact.legal_hold_changed', { type: 'contact', id }, { legalHold: [existing.legalHold ?? false, dto.legalHold] })
          : null;
      let updated: Stored<Contact> | null;
      try {
        updated = await this.contacts.change(companyId, existing, { erasedAt: { $exists: false } }, entry ? withAudit(update, entry) : update, (after) =>
          contactUpdated(existing, after, patch),
        );
      } catch (error) {
        throw this.conflictOr(error);
      }
      if (updated) {
        if (entry) this.audit.written(companyId, this.contacts.collectionName, existing._id, [entry]);
        // Also when the values are the same: a retry of a request that died before the copies were updated heals them.
        if (NAME_FIELDS.some((field) => field in set || field in unset)) await announceSummary(this.emitter, companyId, updated);
        return ContactView.from(updated);
      }
      if (attempt === CHANGE_ATTEMPTS) throw new ConflictException(`Contact ${id} was changed by another request; read it again and retry`);
      current = await this.existing(companyId, id);
      if (current.erasedAt) throw new GoneException(`Contact ${id} has been erased`);
    }
  }

  /**
   * Deletes the contact record only: its conversations and messages stay, as history, still
   * pointing at the deleted contact's id. A later inbound message from the same phone or e-mail
   * creates a new contact (and so a new conversation).
   */
  async remove(companyId: CompanyId, id: string): Promise<DeletedContactView> {
    const _id = parseObjectId(id);
    if (!_id) throw this.notFound(id);
    // A merged source answers 410 (existing), never a silent delete of the tombstone; so does an erased contact.
    const existing = await this.existing(companyId, id);
    if (existing.erasedAt) throw new GoneException(`Contact ${id} has been erased`);
    if (!(await this.contacts.removeWithEvent(companyId, _id))) throw this.notFound(id);
    await announceSummary(this.emitter, companyId, existing, true);
    return { id: _id.toHexString(), deleted: true };
  }

  /** The live contact; 404 when missing, 410 (naming its target) for a merged source. */
  async existing(companyId: CompanyId, id: string): Promise<Stored<Contact>> {
    const contact = await this.contacts.findById(companyId, id);
    if (!contact) throw this.notFound(id);
    if (contact.mergedInto) throw new ContactMergedException(id, contact.mergedInto.toHexString());
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
}
