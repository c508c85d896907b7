import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, UpdateQuery } from 'mongoose';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { Settings } from './settings.schema.js';

@Injectable()
export class SettingsRepository extends TenantRepository<Settings> {
  constructor(@InjectModel(Settings.name) model: Model<Settings>) {
    super(model);
  }

  /**
   * The company's settings. They are created with the company; a company that somehow lacks them
   * gets the defaults here rather than an error (the unique index settles two first reads at once).
   */
  async forCompany(companyId: CompanyId): Promise<Stored<Settings>> {
    const existing = await this.findOne(companyId, {});
    if (existing) return existing;
    try {
      return await this.create(companyId, {});
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      return (await this.findOne(companyId, {})) as Stored<Settings>;
    }
  }

  async patch(companyId: CompanyId, update: UpdateQuery<Settings>): Promise<Stored<Settings>> {
    await this.forCompany(companyId);
    return (await this.updateOne(companyId, {}, update)) as Stored<Settings>;
  }
}
