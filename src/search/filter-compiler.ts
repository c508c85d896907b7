import { Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import { AttributeDefinitionsService } from '../attributes/attribute-definitions.service.js';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { ContactQueries } from '../contacts/contact-queries.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import {
  MAX_CONTACT_MATCHES,
  parseFilter,
  toMongoQuery,
  type FilterModel,
  type FilterSchema,
  type MongoQuery,
  type ParsedFilter,
} from '../filters/index.js';
import { Clock } from '../lanes/clock.js';

/**
 * A company's filters (contract section 20) checked against its attribute definitions and turned into queries: what
 * search, saved views and automation rules share. `contact.*` conditions resolve to at most MAX_CONTACT_MATCHES of the
 * company's contacts (more: 400 naming the condition).
 */
@Injectable()
export class FilterCompiler {
  constructor(
    private readonly attributes: AttributeDefinitionsService,
    private readonly contacts: ContactQueries,
    private readonly clock: Clock,
  ) {}

  /** The definitions a filter of `model` is checked against. */
  async schemaOf(companyId: CompanyId, model: FilterModel): Promise<FilterSchema> {
    if (model === 'contact') return { model, attributes: await this.attributes.rulesOf(companyId, 'contact') };
    const [attributes, contactAttributes] = await Promise.all([
      this.attributes.rulesOf(companyId, 'conversation'),
      this.attributes.rulesOf(companyId, 'contact'),
    ]);
    return { model, attributes, contactAttributes };
  }

  /** Checks a filter (400 naming its place under `path`). */
  async parse(companyId: CompanyId, model: FilterModel, input: unknown, path = 'filter'): Promise<ParsedFilter> {
    return parseFilter(await this.schemaOf(companyId, model), input, path);
  }

  /** The query of a parsed filter, within the company. */
  async query(companyId: CompanyId, filter: ParsedFilter): Promise<MongoQuery> {
    return toMongoQuery(filter, {
      now: this.clock.now(),
      contactIds: async (query, path) => {
        const ids: Types.ObjectId[] = await this.contacts.idsMatching(companyId, query, MAX_CONTACT_MATCHES);
        if (ids.length > MAX_CONTACT_MATCHES) {
          throw new RequestValidationException([
            {
              field: path,
              message: `${path} matches more than ${MAX_CONTACT_MATCHES} contacts: narrow it (another condition on the contact, or a condition on the conversation instead)`,
            },
          ]);
        }
        return ids;
      },
    });
  }
}
