import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { AutomationRule, MAX_RULES_PER_COMPANY } from './automation-rule.schema.js';

@Injectable()
export class AutomationRulesRepository extends TenantRepository<AutomationRule> {
  constructor(@InjectModel(AutomationRule.name) model: Model<AutomationRule>) {
    super(model);
  }

  /** The company's active rules, oldest first (the order they run in). */
  async active(companyId: CompanyId): Promise<Stored<AutomationRule>[]> {
    return this.findPlain(companyId, { isActive: true }, { sort: { _id: 1 }, limit: MAX_RULES_PER_COMPANY });
  }

  /**
   * What changes whenever any rule of the company is created, edited or deleted: their number and the latest
   * `updatedAt`, read from two indexes without reading a rule.
   */
  async stamp(companyId: CompanyId): Promise<string> {
    const [count, latest] = await Promise.all([
      this.countPlain(companyId, {}),
      this.findPlain(companyId, {}, { sort: { updatedAt: -1 }, limit: 1, projection: { updatedAt: 1 } }),
    ]);
    return `${count}:${latest[0]?.updatedAt.getTime() ?? 0}`;
  }
}
