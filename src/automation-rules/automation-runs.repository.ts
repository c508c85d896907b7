import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import type { ConversationView } from '../conversations/conversation.view.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { AutomationRun, RUN_RETENTION_MS, type RunActionResult, type RunOutcome } from './automation-run.schema.js';
import { AutomationRunView } from './automation-run.view.js';

export type StoredRun = Stored<AutomationRun>;
export type RunClaim = Pick<AutomationRun, 'ruleId' | 'conversationId' | 'triggerKey' | 'trigger' | 'depth'>;

/** Rule runs: claimed before the actions, each action recorded as it ends, finished with `automation.applied`. */
@Injectable()
export class AutomationRunsRepository extends EventSourceRepository<AutomationRun> {
  constructor(@InjectModel(AutomationRun.name) model: Model<AutomationRun>, relay: EventRelay) {
    super(model, relay);
  }

  /** The runs recorded already for these triggers (a retried event's), by trigger key: one read for all its rules. */
  async byTriggerKeys(companyId: CompanyId, keys: string[]): Promise<Map<string, StoredRun>> {
    const runs = await this.find(companyId, { triggerKey: { $in: keys } });
    return new Map(runs.map((run) => [run.triggerKey, run]));
  }

  /** The run of this trigger: a new `running` one, or the one recorded already (a retry resumes or finds it done). */
  async claim(companyId: CompanyId, run: RunClaim, now: Date): Promise<{ run: StoredRun; resumed: boolean }> {
    try {
      const created = await this.create(companyId, { ...run, outcome: 'running', actions: [], expireAt: new Date(now.getTime() + RUN_RETENTION_MS) });
      return { run: created, resumed: false };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const existing = await this.findOne(companyId, { triggerKey: run.triggerKey });
      if (!existing) throw error;
      return { run: existing, resumed: true };
    }
  }

  async recordAction(companyId: CompanyId, id: Types.ObjectId, index: number, result: RunActionResult): Promise<void> {
    // Only at its place: a second process resuming the same run cannot append an action twice.
    await this.model
      .updateOne(this.scope(companyId, { _id: id, outcome: 'running', actions: { $size: index } }), { $push: { actions: result } })
      .exec();
  }

  /** Ends a running run with its outcome and `automation.applied`, once. */
  async finish(companyId: CompanyId, run: StoredRun, actions: RunActionResult[], outcome: RunOutcome, conversation: ConversationView): Promise<void> {
    const view = AutomationRunView.from({ ...run, actions, outcome });
    const event = stageEvent('automation.applied', { run: view, conversation }, { occurredAt: new Date() });
    await this.updateWithEvents(companyId, { _id: run._id, outcome: 'running' }, { $set: { outcome, actions } }, [event]);
  }
}
