import { Injectable } from '@nestjs/common';
import { BoundedMap } from '../common/bounded-map.js';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { parseFilter, type FilterSchema, type ParsedFilter } from '../filters/index.js';
import { FilterCompiler } from '../search/filter-compiler.js';
import type { AutomationRule } from './automation-rule.schema.js';
import { AutomationRulesRepository } from './automation-rules.repository.js';

/** An active rule with its conditions parsed once, when the company's rules were loaded. */
export interface LoadedRule {
  rule: Stored<AutomationRule>;
  filter: ParsedFilter | null;
  /** Whether a condition reads the contact (`contact.*`): only then is the contact read. */
  readsContact: boolean;
}

/** A company's active rules: those of each event, and those of a time trigger. */
export interface CompanyRules {
  stamp: string;
  byEvent: Map<string, LoadedRule[]>;
  timers: LoadedRule[];
}

const MAX_COMPANIES = 10_000;

/** Whether a rule's conditions read the contact (`contact.*`): only then is the contact read. */
export const readsContact = (conditions: Record<string, unknown> | null): boolean => JSON.stringify(conditions).includes('"contact.');

/**
 * Each company's active rules, by trigger, kept in memory and loaded again only when its stamp (the number of its
 * rules and their latest change, two index reads) moved: 200 rules cost a map lookup per event, not a query.
 */
@Injectable()
export class AutomationRuleCache {
  private readonly companies = new BoundedMap<string, CompanyRules>(MAX_COMPANIES);

  constructor(
    private readonly rules: AutomationRulesRepository,
    private readonly filters: FilterCompiler,
  ) {}

  async of(companyId: string): Promise<CompanyRules> {
    const stamp = await this.rules.stamp(companyId);
    const cached = this.companies.get(companyId);
    if (cached?.stamp === stamp) return cached;
    const loaded: CompanyRules = { stamp, byEvent: new Map(), timers: [] };
    const rules = await this.rules.active(companyId);
    const schema = rules.some((rule) => rule.conditions) ? await this.filters.schemaOf(companyId, 'conversation') : null;
    for (const rule of rules) {
      const entry = this.load(schema, rule);
      if (!entry) continue;
      if (rule.trigger.timer) loaded.timers.push(entry);
      else if (rule.trigger.event) loaded.byEvent.set(rule.trigger.event, [...(loaded.byEvent.get(rule.trigger.event) ?? []), entry]);
    }
    this.companies.set(companyId, loaded);
    return loaded;
  }

  /** Null for a rule whose conditions no longer parse (an attribute definition deleted since): it cannot match. */
  private load(schema: FilterSchema | null, rule: Stored<AutomationRule>): LoadedRule | null {
    if (!rule.conditions || !schema) return { rule, filter: null, readsContact: false };
    try {
      const filter = parseFilter(schema, rule.conditions, 'conditions');
      return { rule, filter, readsContact: readsContact(rule.conditions) };
    } catch {
      return null;
    }
  }
}
