import { BadRequestException, ConflictException, ForbiddenException, GoneException, Injectable, NotFoundException } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { isEmail } from 'class-validator';
import { Types, type QueryFilter } from 'mongoose';
import { attributeChanges, attributeUpdate, type AttributePatch } from '../attributes/attribute-values.js';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { mapPage, type Page } from '../common/pagination/page.js';
import { duplicateKeyField, isDuplicateKeyError } from '../database/mongo-errors.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { FieldChanges } from '../events/domain-events.js';
import { stageEvent } from '../events/pending-event.schema.js';
import type { Contact } from './contact.schema.js';
import { CONTACT_SUMMARY_CHANGED, contactSummaryOf, type ContactSummaryChange } from './contact-summary-changed.js';
import { contactListFilter } from './contact-search.js';
import { CONTACT_SUMMARY_FIELDS, ContactSummaryView, ContactView, DeletedContactView, type DuplicateCandidatesPage } from './contact.view.js';
import { candidateGroups, decodeNameCursor as decodeDuplicateCursor, encodeNameCursor as encodeDuplicateCursor } from './contact-duplicates.js';
import type { ListDuplicatesQueryDto } from './dto/list-duplicates-query.dto.js';
import { ContactsRepository, type ContactIdentityField, type ContactUpdate } from './contacts.repository.js';
import type { CreateContactDto } from './dto/create-contact.dto.js';
import type { ListContactsQueryDto } from './dto/list-contacts-query.dto.js';
import type { UpdateContactDto } from './dto/update-contact.dto.js';
import { normalizePhone } from './phone-number.js';
import { stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { AuditTrail } from '../audit/audit-trail.js';
import type { Role } from '../auth/auth-principal.js';
import { roleAllows } from '../auth/guards/permissions.guard.js';
import { ContactMergedException } from './contact-merged.exception.js';
import { nameKeyOf } from './name-key.js';

export const CONTACT_SORTS = ['created', 'name'] as const;
export type ContactSort = (typeof CONTACT_SORTS)[number];

function encodeNameCursor(name: string | null, id: Types.ObjectId): string {
  return Buffer.from(JSON.stringify(['n1', name, id.toHexString()])).toString('base64url');
}

function decodeNameCursor(cursor: string): { name: string | null; id: Types.ObjectId } {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString());
  } catch {
    decoded = null;
  }
  const [version, name, id] = Array.isArray(decoded) ? decoded : [];
  if (version !== 'n1' || !(name === null || typeof name === 'string') || typeof id !== 'string' || !/^[0-9a-f]{24}$/.test(id)) {
    throw new RequestValidationException([{ field: 'cursor', message: 'cursor is not a cursor of this search: pass back a nextCursor unchanged' }]);
  }
  return { name, id: new Types.ObjectId(id) };
}

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
/** How many times a change is computed again when the contact moved under it (then 409). */
const CHANGE_ATTEMPTS = 5;

/** The event of a new contact, showing it as stored. */
/**
 * The event of a new contact, showing it as stored. One a channel's message created is filed under that channel, so a
 * key limited to other channels does not see it (contract section 13); one created through the API reaches every key.
 */
const created =
  (channel: string | null = null) =>
  (record: Stored<Contact>) => [stageEvent('contact.created', { contact: ContactView.from(record) }, { occurredAt: record.createdAt, channel })];

/** `contact.updated` with what changed: the named fields, and the attributes as `attributes.<key>`. */
function updatedEvents(before: Stored<Contact>, after: Stored<Contact>, patch: AttributePatch | null, channel: string | null = null) {
  const changes: FieldChanges = {};
  for (const field of [...NAME_FIELDS, 'tags'] as const) {
    const was = before[field] ?? null;
    const now = after[field] ?? null;
    if (JSON.stringify(was) !== JSON.stringify(now)) changes[field] = [was, now];
  }
  if (patch) Object.assign(changes, attributeChanges(before.attributes, patch));
  return [stageEvent('contact.updated', { contact: ContactView.from(after), changes }, { occurredAt: after.updatedAt, channel })];
}
/** Contacts read at a time when looking for duplicates, and at most this many reads per page. */
const DUPLICATE_SCAN_BATCH = 500;
const DUPLICATE_SCAN_READS = 10;
/** How many merges a merged source's phone or e-mail is followed through to the contact that has it now. */
const MAX_MERGE_HOPS = 10;
/** Contacts that are not merged sources (tombstones): what lists, searches and lookups see. */
export const LIVE_CONTACT = { mergedInto: null } as const;
/** The 403 of a legal hold set by a supervisor or an agent (contract section 23). */
export const LEGAL_HOLD_NEEDS_ADMIN = 'Only admins may set or lift a legal hold';

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
    private readonly attributes: AttributeDefinitionsService,
    private readonly audit: AuditTrail,
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

  /**
   * The contact with this phone, else with this e-mail, else a new one. Race-safe: when a
   * concurrent call creates the same contact first, the duplicate key sends this one back to read
   * the winner. A name, e-mail or phone the contact lacks is filled in, unless another contact
   * already holds that e-mail or phone. 400 when the phone or e-mail is malformed or both are missing.
   */
  async findOrCreateByIdentity(companyId: CompanyId, identity: ContactIdentity, channel: string | null = null): Promise<Stored<Contact>> {
    const normalized = this.normalizeIdentity(identity);
    if (!normalized.phone && !normalized.email) {
      throw new BadRequestException('A contact is identified by a phone or an e-mail: give at least one');
    }
    const existing = await this.findByIdentity(companyId, normalized);
    if (existing) return this.fillMissing(companyId, existing, normalized, channel);
    try {
      return await this.contacts.insertContact(
        companyId,
        { ...normalized, ...(nameKeyOf(normalized.name) ? { nameKey: nameKeyOf(normalized.name) } : {}), tags: [], attributes: {} },
        created(channel),
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
    return this.findByIdentity(companyId, this.normalizeIdentity(identity));
  }

  async list(companyId: CompanyId, query: ListContactsQueryDto): Promise<Page<ContactView>> {
    const filter = { ...contactListFilter({ search: query.search, tags: query.tags }), ...LIVE_CONTACT };
    const page = await this.contacts.page(companyId, filter, { limit: query.limit, cursor: query.cursor });
    return mapPage(page, ContactView.from);
  }

  /** The ids of the contacts `query` matches (stored types), at most `max` + 1: the caller learns there are more. */
  async idsMatching(companyId: CompanyId, query: QueryFilter<Contact>, max: number): Promise<Types.ObjectId[]> {
    const rows = await this.contacts.findPlain(companyId, { ...query, ...LIVE_CONTACT }, { projection: { _id: 1 }, limit: max + 1, sort: { _id: 1 } });
    return rows.map((row) => row._id);
  }

  /**
   * A page of the contacts `query` matches (stored types): `created` newest first, or `name` A to Z (contacts without
   * a name first, as MongoDB orders null), continuing strictly after the cursor's contact.
   */
  async searchPage(companyId: CompanyId, filter: QueryFilter<Contact>, sort: ContactSort, limit: number, cursor?: string): Promise<Page<ContactView>> {
    // Merged sources (tombstones) are left out, as from the list.
    const query: QueryFilter<Contact> = { ...filter, ...LIVE_CONTACT };
    if (sort === 'created') return mapPage(await this.contacts.page(companyId, query, { limit, cursor, plain: true }), ContactView.from);
    const after = cursor === undefined ? null : decodeNameCursor(cursor);
    const window: QueryFilter<Contact> = after
      ? {
          $and: [
            query,
            after.name === null
              ? { $or: [{ name: null, _id: { $gt: after.id } }, { name: { $type: 'string' } }] }
              : { $or: [{ name: after.name, _id: { $gt: after.id } }, { name: { $gt: after.name } }] },
          ],
        }
      : query;
    const rows = await this.contacts.findPlain(companyId, window, { sort: { name: 1, _id: 1 }, limit: limit + 1 });
    const data = rows.slice(0, limit);
    const last = data.at(-1);
    return { data: data.map(ContactView.from), nextCursor: rows.length > limit && last ? encodeNameCursor(last.name ?? null, last._id) : null };
  }

  /** How many contacts `query` matches (stored types), counting no further than `cap` (saved views' counts). */
  async countUpTo(companyId: CompanyId, query: QueryFilter<Contact>, cap: number): Promise<number> {
    return this.contacts.countPlain(companyId, { ...query, ...LIVE_CONTACT }, cap);
  }

  /**
   * Duplicate candidates, by name key on its index: the contacts of each name, read in name-key order, split into
   * groups without a conflicting e-mail or phone. A page ends after a whole name, so it may hold a few more groups than
   * `limit` when one name gives several; it also ends after DUPLICATE_SCAN_READS reads, to answer in bounded time.
   */
  async duplicates(companyId: CompanyId, query: ListDuplicatesQueryDto): Promise<DuplicateCandidatesPage> {
    let after = query.cursor === undefined ? null : decodeDuplicateCursor(query.cursor);
    const data: DuplicateCandidatesPage['data'] = [];
    for (let read = 0; read < DUPLICATE_SCAN_READS; read += 1) {
      const rows = await this.contacts.findPlain(
        companyId,
        { nameKey: after === null ? { $type: 'string' } : { $gt: after, $type: 'string' } } as never,
        { sort: { nameKey: 1, _id: 1 }, limit: DUPLICATE_SCAN_BATCH },
      );
      const byKey = new Map<string, Stored<Contact>[]>();
      for (const row of rows) byKey.set(row.nameKey!, [...(byKey.get(row.nameKey!) ?? []), row]);
      const keys = [...byKey.keys()];
      // A full batch may have cut its last name short: that name is read whole by the next read.
      const whole = rows.length === DUPLICATE_SCAN_BATCH && keys.length > 1 ? keys.slice(0, -1) : keys;
      for (const key of whole) {
        const sameName = rows.length === DUPLICATE_SCAN_BATCH && keys.length === 1
          ? await this.contacts.findPlain(companyId, { nameKey: { $eq: key, $type: 'string' } } as never, { sort: { nameKey: 1, _id: 1 }, limit: DUPLICATE_SCAN_BATCH * 4 })
          : byKey.get(key)!;
        for (const group of candidateGroups(sameName)) data.push({ contacts: group.map((contact) => ContactView.from(contact)), reason: 'same_name' });
        after = key;
        if (data.length >= query.limit) return { data, nextCursor: encodeDuplicateCursor(key) };
      }
      if (rows.length < DUPLICATE_SCAN_BATCH) return { data, nextCursor: null };
    }
    return { data, nextCursor: after === null ? null : encodeDuplicateCursor(after) };
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
    const patch = await this.attributes.checkPatch(companyId, 'contact', dto.attributes);
    await this.refuseMergedIdentity(companyId, identity);
    try {
      const stored = await this.contacts.insertContact(
        companyId,
        { ...identity, ...(nameKeyOf(identity.name) ? { nameKey: nameKeyOf(identity.name) } : {}), tags: dto.tags ?? [], attributes: patch?.set ?? {} },
        created(),
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
        updated = await this.contacts.change(companyId, existing, { erasedAt: { $exists: false } }, entry ? withAudit(update, entry) : update, (after) => {
          const events = updatedEvents(existing, after, patch);
          return Object.keys((events[0].data as { changes: FieldChanges }).changes).length ? events : [];
        });
      } catch (error) {
        throw this.conflictOr(error);
      }
      if (updated) {
        if (entry) this.audit.written(companyId, this.contacts.collectionName, existing._id, [entry]);
        // Also when the values are the same: a retry of a request that died before the copies were updated heals them.
        if (NAME_FIELDS.some((field) => field in set || field in unset)) await this.summaryChanged(companyId, updated);
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
    await this.emitter.emitAsync(CONTACT_SUMMARY_CHANGED, { companyId: String(companyId), contactId: _id, summary: null } satisfies ContactSummaryChange);
    return { id: _id.toHexString(), deleted: true };
  }

  private async summaryChanged(companyId: CompanyId, contact: Stored<Contact>): Promise<void> {
    const summary = contactSummaryOf(contact);
    await this.emitter.emitAsync(CONTACT_SUMMARY_CHANGED, { companyId: String(companyId), contactId: contact._id, summary } satisfies ContactSummaryChange);
  }

  /** The live contact; 404 when missing, 410 (naming its target) for a merged source. */
  async existing(companyId: CompanyId, id: string): Promise<Stored<Contact>> {
    const contact = await this.contacts.findById(companyId, id);
    if (!contact) throw this.notFound(id);
    if (contact.mergedInto) throw new ContactMergedException(id, contact.mergedInto.toHexString());
    return contact;
  }

  /** 409 naming the contact a merged source's e-mail or phone among `identity` leads to: it is that person's. */
  private async refuseMergedIdentity(companyId: CompanyId, identity: Pick<NormalizedIdentity, ContactIdentityField>): Promise<void> {
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
      const filled = await this.contacts.change(companyId, contact, stillEmpty, { $set: fill }, (after) => updatedEvents(contact, after, null, channel));
      if (filled) await this.summaryChanged(companyId, filled);
      return filled ?? (await this.contacts.findOne(companyId, { _id: contact._id })) ?? contact;
    } catch (error) {
      // Another contact took that e-mail or phone meanwhile: this one stays as it was.
      if (isDuplicateKeyError(error)) return contact;
      throw error;
    }
  }
}
