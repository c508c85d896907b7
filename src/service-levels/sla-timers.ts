import { Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { DurableTimers } from '../lanes/durable-timers.js';
import { SLA_METRICS } from '../sla-policies/sla-metrics.js';
import { pendingStages, SLA_STAGES, stageKey, type ConversationSla } from './sla-state.js';

/** The durable timers of SLA deadlines: one per conversation, metric and stage (`<conversation>:<metric>:<stage>`). */
export const SLA_TIMER = 'sla';
const ALL_STAGE_KEYS = SLA_METRICS.flatMap((metric) => SLA_STAGES.map((stage) => stageKey(metric, stage)));
/** Writes that overtake a sync, one after the other, before it gives up (the next write's sync carries on). */
const SETTLE_ROUNDS = 5;

export const slaTimerKey = (conversationId: Types.ObjectId | string, stageKeyOf: string) => `${String(conversationId)}:${stageKeyOf}`;

/**
 * Keeps a conversation's SLA timers in step with its stored SLA: after a write, the timers of the stages that
 * changed are set or cancelled. Several writers (the log consumer, a firing, a recompute) may write one conversation's
 * SLA at once, each conditional on the version it read, and their timer updates may land in any order; so a writer
 * reads the version again after its update, and while another write overtook it, sets every timer again from the
 * stored state. The last update to land is thus always followed by one from the latest state.
 */
@Injectable()
export class SlaTimers {
  constructor(
    private readonly timers: DurableTimers,
    private readonly conversations: ConversationsRepository,
  ) {}

  /** `before` → `after` was written (with `after.version`); `full`: set every timer, whatever `before` had. */
  async settle(companyId: CompanyId, id: Types.ObjectId, before: ConversationSla | null, after: ConversationSla | null, full = false): Promise<void> {
    let written = after;
    await this.apply(companyId, id, full ? null : pendingStages(before), pendingStages(after));
    for (let round = 0; round < SETTLE_ROUNDS; round += 1) {
      const version = await this.conversations.slaVersion(companyId, id);
      if (version === (written?.version ?? null)) return;
      const current = await this.conversations.findById(companyId, id.toHexString(), { sla: 1 });
      written = current?.sla ?? null;
      await this.apply(companyId, id, null, pendingStages(written));
    }
  }

  /** Sets the stages due in `to` that `from` lacks or had at another time; cancels the others (`from` null: all). */
  private async apply(companyId: CompanyId, id: Types.ObjectId, from: Map<string, Date> | null, to: Map<string, Date>): Promise<void> {
    const keys = from ? new Set([...from.keys(), ...to.keys()]) : ALL_STAGE_KEYS;
    await Promise.all(
      [...keys].map((key) => {
        const due = to.get(key);
        if (from && from.get(key)?.getTime() === due?.getTime()) return Promise.resolve();
        const timerKey = slaTimerKey(id, key);
        return due ? this.timers.set(companyId, SLA_TIMER, timerKey, due) : this.timers.cancel(companyId, SLA_TIMER, timerKey);
      }),
    );
  }
}
