import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter } from 'mongoose';
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
}
