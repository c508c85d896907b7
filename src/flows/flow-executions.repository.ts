import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model } from 'mongoose';
import { AppConfig } from '../config/app-config.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { FlowExecutionSnapshot, FlowExecutionStepResult } from '../events/domain-events.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { FlowExecution } from './flow-execution.schema.js';

export type StoredExecution = Stored<FlowExecution>;

export function snapshotOf(execution: Pick<StoredExecution, '_id' | 'flowId' | 'conversationId' | 'steps'>, status: 'completed' | 'failed'): FlowExecutionSnapshot {
  return {
    executionId: execution._id.toHexString(),
    flowId: execution.flowId.toHexString(),
    conversationId: execution.conversationId.toHexString(),
    status,
    steps: execution.steps,
  };
}

/** Flow runs. A run ends with one write that records its result and carries its `flow.executed` event. */
@Injectable()
export class FlowExecutionsRepository extends EventSourceRepository<FlowExecution> {
  private readonly retentionMs: number;

  constructor(@InjectModel(FlowExecution.name) model: Model<FlowExecution>, relay: EventRelay, config: AppConfig) {
    super(model, relay);
    this.retentionMs = config.flowExecutionRetentionDays * 86_400_000;
  }

  /** A finished run recorded at once (a manual run), with its event. */
  async recordFinished(
    companyId: CompanyId,
    run: Pick<FlowExecution, 'flowId' | 'conversationId' | 'channel' | 'trigger' | 'steps'> & { _id: Types.ObjectId },
    status: 'completed' | 'failed',
  ): Promise<FlowExecutionSnapshot> {
    const now = new Date();
    const record = { ...run, status, createdAt: now, updatedAt: now, ...this.expiry(now) };
    const execution = snapshotOf(record, status);
    await this.insertWithEvents(companyId, record, [stageEvent('flow.executed', { execution }, { occurredAt: now, channel: run.channel })]);
    return execution;
  }

  /**
   * The run of a flow for a trigger key (an event, a rule's action): a new `running` one, or the one already
   * recorded for that key (a retry after a crash resumes it, or finds it finished).
   */
  async claimTriggered(
    companyId: CompanyId,
    run: Pick<FlowExecution, 'flowId' | 'conversationId' | 'channel' | 'triggerKey' | 'trigger'>,
  ): Promise<{ execution: StoredExecution; resumed: boolean }> {
    try {
      const execution = await this.create(companyId, { ...run, status: 'running', steps: [] });
      return { execution, resumed: false };
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error;
      const existing = await this.findOne(companyId, { triggerKey: run.triggerKey });
      if (!existing) throw error;
      return { execution: existing, resumed: true };
    }
  }

  /** The runs already recorded for any of these trigger keys (a triggering event handled again). */
  async forTriggerKeys(companyId: CompanyId, keys: string[]): Promise<StoredExecution[]> {
    return keys.length === 0 ? [] : this.find(companyId, { triggerKey: { $in: keys } });
  }

  /** Records one more step of a running execution. */
  async recordStep(companyId: CompanyId, id: Types.ObjectId, step: FlowExecutionStepResult): Promise<void> {
    await this.model.updateOne(this.scope(companyId, { _id: id, status: 'running' }), { $push: { steps: step } }).exec();
  }

  /** Ends a running execution with its result and `flow.executed`, once: an execution no longer running is left alone. */
  async finish(companyId: CompanyId, execution: StoredExecution, steps: FlowExecutionStepResult[], status: 'completed' | 'failed'): Promise<FlowExecutionSnapshot> {
    const now = new Date();
    const snapshot = snapshotOf({ ...execution, steps }, status);
    const event = stageEvent('flow.executed', { execution: snapshot }, { occurredAt: now, channel: execution.channel });
    await this.updateWithEvents(companyId, { _id: execution._id, status: 'running' }, { $set: { status, steps, ...this.expiry(now) } }, [event]);
    return snapshot;
  }

  private expiry(finishedAt: Date): { expireAt?: Date } {
    return this.retentionMs > 0 ? { expireAt: new Date(finishedAt.getTime() + this.retentionMs) } : {};
  }
}
