import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { ReadThroughCache } from '../database/caching/read-through-cache.js';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { ATTRIBUTE_DEFINITION_WRITES, AttributeDefinition, MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL } from './attribute-definition.schema.js';

/** What a value or a filter is checked against: a definition's key, model, type, options and whether it is archived. */
export type DefinitionRule = Pick<Stored<AttributeDefinition>, 'model' | 'key' | 'type' | 'options' | 'archived'>;

const RULE_FIELDS = { model: 1, key: 1, type: 1, options: 1, archived: 1 };

@Injectable()
export class AttributeDefinitionsRepository extends TenantRepository<AttributeDefinition> {
  private readonly rulesByCompany = new ReadThroughCache<readonly DefinitionRule[]>(ATTRIBUTE_DEFINITION_WRITES);

  constructor(@InjectModel(AttributeDefinition.name) model: Model<AttributeDefinition>) {
    super(model);
  }

  /**
   * Every definition of the company, as rules. Every filter parsed and every attribute written asks, so they are
   * served from memory, all of a company's in one entry: a change made in this process applies at once
   * (ATTRIBUTE_DEFINITION_WRITES), one made by another process within CROSS_PROCESS_STALENESS_MS. Read-only.
   */
  rules(companyId: CompanyId): Promise<readonly DefinitionRule[]> {
    return this.rulesByCompany.get(String(companyId), () =>
      this.findPlain(companyId, {}, { projection: RULE_FIELDS, limit: 2 * MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL }),
    );
  }
}
