import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, UpdateQuery } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import { Settings, SETTINGS_WRITES } from './settings.schema.js';

@Injectable()
export class SettingsRepository extends TenantRepository<Settings> {
  private readonly cache = new ReadThroughCache<Stored<Settings>>(SETTINGS_WRITES);

  constructor(@InjectModel(Settings.name) model: Model<Settings>) {
    super(model);
  }

  /**
   * The company's settings, read on many requests, so served from memory: a change made in this process
   * applies at once (SETTINGS_WRITES), one made by another process within CROSS_PROCESS_STALENESS_MS. Read-only.
   */
  forCompany(companyId: CompanyId): Promise<Stored<Settings>> {
    return this.cache.get(String(companyId), () => this.readOrCreate(companyId));
  }

  /**
   * They are created with the company; a company that somehow lacks them gets the defaults here rather
   * than an error (the unique index settles two first reads at once).
   */
  private async readOrCreate(companyId: CompanyId): Promise<Stored<Settings>> {
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
    await this.readOrCreate(companyId);
    return (await this.updateOne(companyId, {}, update)) as Stored<Settings>;
  }

  /** Every company's welcome message that is still `text` becomes empty (a data migration across companies). */
  async clearWelcomeMessage(text: string): Promise<number> {
    const result = await this.model.updateMany({ welcomeMessage: text }, { $set: { welcomeMessage: '' } }).setOptions({ [CROSS_TENANT]: true }).exec();
    return result.modifiedCount;
  }
}
