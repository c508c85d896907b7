import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type QueryFilter, type UpdateQuery } from 'mongoose';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import { stageEvent, type PendingEvent } from '../events/pending-event.schema.js';
import { Contact } from './contact.schema.js';

export type ContactIdentityField = 'email' | 'phone';

/** Contacts that are not merged sources (tombstones): what lists, searches and lookups see. */
export const LIVE_CONTACT = { mergedInto: null } as const;

/** A change of a contact: dotted paths (`attributes.<key>`) to set and to remove. */
export interface ContactUpdate {
  $set?: Record<string, unknown>;
  $unset?: Record<string, 1>;
}

/** `record` with `update` applied (dotted paths one level deep, as contacts' updates are). */
function applied(record: Stored<Contact>, update: ContactUpdate): Stored<Contact> {
  const after = { ...record, attributes: { ...(record.attributes ?? {}) } } as Record<string, unknown> & { attributes: Record<string, unknown> };
  for (const [path, value] of Object.entries(update.$set ?? {})) {
    if (path.startsWith('attributes.')) after.attributes[path.slice('attributes.'.length)] = value;
    else after[path] = value;
  }
  for (const path of Object.keys(update.$unset ?? {})) {
    if (path.startsWith('attributes.')) delete after.attributes[path.slice('attributes.'.length)];
    else delete after[path];
  }
  return after as unknown as Stored<Contact>;
}

/**
 * Contacts, whose changes carry their events (contract section 20). A deleted contact is first marked (`deletedAt`,
 * with `contact.deleted` pending) and removed once the event is logged; no read sees a marked one.
 */
@Injectable()
export class ContactsRepository extends EventSourceRepository<Contact> {
  constructor(
    @InjectModel(Contact.name) model: Model<Contact>,
    private readonly events: EventRelay,
  ) {
    super(model, events);
  }

  protected override scope(companyId: CompanyId, filter: QueryFilter<Contact> = {}): QueryFilter<Contact> {
    return { ...super.scope(companyId, filter), deletedAt: { $exists: false } } as QueryFilter<Contact>;
  }

  /**
   * The contact holding this e-mail or phone. The `$type` repeats the partial filter of the unique
   * `{ companyId, <field> }` index: MongoDB's planner only uses a partial index when the query
   * provably implies its filter, and it does not infer that from an equality on a string.
   */
  async findByIdentity(companyId: CompanyId, field: ContactIdentityField, value: string): Promise<Stored<Contact> | null> {
    return this.findOnePlain(companyId, { [field]: { $eq: value, $type: 'string' } } as QueryFilter<Contact>);
  }

  /** Inserts a contact with the events `stage` makes of it (the record is complete before the write). */
  async insertContact(companyId: CompanyId, data: Partial<Contact>, stage: (record: Stored<Contact>) => PendingEvent[]): Promise<Stored<Contact>> {
    const now = new Date();
    const record = {
      tags: [],
      attributes: {},
      ...data,
      revision: 0,
      _id: new Types.ObjectId(),
      companyId: new Types.ObjectId(String(companyId)),
      createdAt: now,
      updatedAt: now,
    } as Stored<Contact>;
    return this.insertWithEvents(companyId, record, stage(record));
  }

  /**
   * Applies `update` to `current` if it is still at the same revision and matches `expected`, with the events `stage`
   * makes of the result. Null when anything changed since `current` was read (nothing written, no event).
   */
  async change(
    companyId: CompanyId,
    current: Stored<Contact>,
    expected: QueryFilter<Contact>,
    update: ContactUpdate,
    stage: (after: Stored<Contact>) => PendingEvent[],
  ): Promise<Stored<Contact> | null> {
    const updatedAt = new Date();
    const revision = current.revision ?? 0;
    const after = { ...applied(current, update), updatedAt, revision: revision + 1, pendingEvents: undefined } as Stored<Contact>;
    // `revision: null` also matches a contact stored before revisions existed.
    const filter = { ...expected, _id: current._id, revision: current.revision ?? null } as QueryFilter<Contact>;
    const write = { ...update, $set: { ...update.$set, updatedAt, revision: revision + 1 } } as UpdateQuery<Contact>;
    return this.updateWithEvents(companyId, filter, write, stage(after), { timestamps: false });
  }

  /**
   * Marks the contact deleted with `contact.deleted` (one write; its e-mail and phone are freed at once), waits for
   * the event to be logged, then removes the record. False when there is no such contact.
   */
  async removeWithEvent(companyId: CompanyId, id: Types.ObjectId): Promise<boolean> {
    const events = [stageEvent('contact.deleted', { contactId: id.toHexString() })];
    const marked = (await this.model
      .findOneAndUpdate(
        this.scope(companyId, { _id: id }),
        { $set: { deletedAt: new Date() }, $unset: { email: 1, phone: 1 }, $push: { pendingEvents: { $each: events } } },
        { returnDocument: 'after', timestamps: false },
      )
      .lean()
      .exec()) as Stored<Contact> | null;
    if (!marked) return false;
    await this.events.relay(String(companyId), [{ source: this, docId: id, events: marked.pendingEvents ?? events }]);
    await this.model.deleteOne({ _id: id, companyId: this.tenant(companyId), deletedAt: { $exists: true } }).exec();
    return true;
  }

  /** Removes `key` from the attributes of every contact of the company holding it (its definition was deleted). */
  async unsetAttribute(companyId: CompanyId, key: string): Promise<void> {
    const path = `attributes.${key}`;
    await this.model.updateMany(this.scope(companyId, { [path]: { $exists: true } }), { $unset: { [path]: 1 } }, { timestamps: false }).exec();
  }

  /** Contacts with attributes after `after`, by `_id`, across companies: the one-time migration to definitions. */
  async withAttributesAfter(after: Types.ObjectId | null, limit: number): Promise<Pick<Stored<Contact>, '_id' | 'companyId' | 'attributes'>[]> {
    return this.model
      .find({ ...(after ? { _id: { $gt: after } } : {}), attributes: { $ne: {} } }, { companyId: 1, attributes: 1 })
      .sort({ _id: 1 })
      .limit(limit)
      .setOptions({ [CROSS_TENANT]: true })
      .lean<Pick<Stored<Contact>, '_id' | 'companyId' | 'attributes'>[]>()
      .exec();
  }
  /** The merged source (tombstone) that held this e-mail or phone, on the partial index of `mergedIdentity`. */
  async findMergedByIdentity(companyId: CompanyId, field: ContactIdentityField, value: string): Promise<Stored<Contact> | null> {
    return this.findOnePlain(companyId, { [`mergedIdentity.${field}`]: { $eq: value, $type: 'string' } } as QueryFilter<Contact>);
  }

  /** Named contacts stored before names had a key (duplicates), across companies, after `after` in `_id` order. */
  async withoutNameKey(after: Types.ObjectId | null, limit: number): Promise<{ _id: Types.ObjectId; name: string }[]> {
    return this.model
      .find({ ...(after ? { _id: { $gt: after } } : {}), name: { $type: 'string' }, nameKey: { $exists: false } }, { name: 1 })
      .sort({ _id: 1 })
      .limit(limit)
      .setOptions({ [CROSS_TENANT]: true })
      .lean<{ _id: Types.ObjectId; name: string }[]>()
      .exec();
  }

  /** Sets each contact's name key, if it still has none (see withoutNameKey). */
  async setNameKeys(keys: { _id: Types.ObjectId; nameKey: string }[]): Promise<void> {
    if (keys.length === 0) return;
    await this.model.bulkWrite(
      keys.map(({ _id, nameKey }) => ({ updateOne: { filter: { _id, nameKey: { $exists: false } }, update: { $set: { nameKey } } } })) as never,
      { ordered: false },
    );
  }
}
