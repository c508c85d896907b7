import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, Types } from 'mongoose';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Contact } from './contact.schema.js';

export type ContactIdentityField = 'email' | 'phone';

@Injectable()
export class ContactsRepository extends TenantRepository<Contact> {
  constructor(@InjectModel(Contact.name) model: Model<Contact>) {
    super(model);
  }

  /**
   * The contact holding this e-mail or phone. The `$type` repeats the partial filter of the unique
   * `{ companyId, <field> }` index: MongoDB's planner only uses a partial index when the query
   * provably implies its filter, and it does not infer that from an equality on a string.
   */
  async findByIdentity(companyId: CompanyId, field: ContactIdentityField, value: string): Promise<Stored<Contact> | null> {
    return this.findOnePlain(companyId, { [field]: { $eq: value, $type: 'string' } } as QueryFilter<Contact>);
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
