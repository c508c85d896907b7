import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { AutomationRun, RunActionResult, RunOutcome, RunTrigger } from './automation-run.schema.js';

export class RunActionResultView {
  /** @example add_tags */
  type: string;
  status: 'ok' | 'failed' | 'skipped';
  error?: string;
}

/** One run of a rule on a conversation (contract section 21). */
export class AutomationRunView {
  /** @example 6650f0c2a1b2c3d4e5f60790 */
  id: string;
  ruleId: string;
  conversationId: string;
  /** `{ event, eventId }` or `{ timer: { after, since } }` */
  trigger: RunTrigger;
  at: string;
  outcome: Exclude<RunOutcome, 'running'> | 'running';
  actions: RunActionResultView[];

  static from(
    run: Pick<Stored<AutomationRun>, '_id' | 'ruleId' | 'conversationId' | 'trigger' | 'createdAt' | 'outcome'> & { actions: RunActionResult[] },
  ): AutomationRunView {
    return {
      id: run._id.toHexString(),
      ruleId: run.ruleId.toHexString(),
      conversationId: run.conversationId.toHexString(),
      trigger: run.trigger,
      at: run.createdAt.toISOString(),
      outcome: run.outcome,
      actions: run.actions.map((action) => ({ type: action.type, status: action.status, ...(action.error ? { error: action.error } : {}) })),
    };
  }
}
