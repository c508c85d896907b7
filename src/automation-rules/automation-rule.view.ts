import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { AutomationRule, RuleAction, RuleTrigger } from './automation-rule.schema.js';

/** An automation rule (contract section 21). */
export class AutomationRuleView {
  /** @example 6650f0c2a1b2c3d4e5f60780 */
  id: string;
  /** @example Refunds to Billing */
  name: string;
  isActive: boolean;
  /** `{ event }` or `{ timer: { after, since } }` */
  trigger: RuleTrigger;
  /** A filter (docs/filters.md) on the conversation, or null */
  conditions: Record<string, unknown> | null;
  actions: RuleAction[];
  stopOnError: boolean;
  /** Moves on every edit */
  version: number;
  createdAt: string;
  updatedAt: string;

  static from(rule: Stored<AutomationRule>): AutomationRuleView {
    return {
      id: rule._id.toHexString(),
      name: rule.name,
      isActive: rule.isActive,
      trigger: rule.trigger,
      conditions: rule.conditions ?? null,
      actions: rule.actions,
      stopOnError: rule.stopOnError,
      version: rule.version,
      createdAt: rule.createdAt.toISOString(),
      updatedAt: rule.updatedAt.toISOString(),
    };
  }
}

export class DeletedAutomationRuleView {
  /** @example 6650f0c2a1b2c3d4e5f60780 */
  id: string;
  /** @example true */
  deleted: true;
}
