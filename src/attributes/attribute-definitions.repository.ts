import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { TenantRepository, type CompanyId } from '../database/tenancy/tenant-repository.js';
import {
  ATTRIBUTE_DEFINITION_WRITES,
  AttributeDefinition,
  MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL,
  type AttributeModel,
} from './attribute-definition.schema.js';
import type { AttributeRule } from './attribute-values.js';

/** A company's definitions as rules, by model and key (archived ones included). Read-only: shared by every caller. */
export type RulesByModel = Readonly<Record<AttributeModel, ReadonlyMap<string, AttributeRule>>>;

const RULE_FIELDS = { model: 1, key: 1, type: 1, options: 1, archived: 1 };

@Injectable()
export class AttributeDefinitionsRepository extends TenantRepository<AttributeDefinition> {
  private readonly rulesByCompany = new ReadThroughCache<RulesByModel>(ATTRIBUTE_DEFINITION_WRITES);

  constructor(@InjectModel(AttributeDefinition.name) model: Model<AttributeDefinition>) {
    super(model);
  }

  /**
   * The company's rules. Every filter parsed and every attribute written asks, so they are served from memory, all of
   * a company's in one entry: a change made in this process applies at once (ATTRIBUTE_DEFINITION_WRITES), one made
   * by another process within CROSS_PROCESS_STALENESS_MS.
   */
  rules(companyId: CompanyId): Promise<RulesByModel> {
    return this.rulesByCompany.get(String(companyId), async () => {
      const rows = await this.findPlain(companyId, {}, { projection: RULE_FIELDS, limit: 2 * MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL });
      const byModel = { conversation: new Map<string, AttributeRule>(), contact: new Map<string, AttributeRule>() };
      for (const row of rows)
        byModel[row.model].set(row.key, { key: row.key, type: row.type, options: row.options ?? [], archived: row.archived ?? false });
      return byModel;
    });
  }
}
