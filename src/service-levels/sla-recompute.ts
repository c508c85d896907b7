import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { parseObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { SlaTracker } from './sla-tracker.js';

/** The durable timer that computes a company's business-hours deadlines again, a page per firing (key: the company). */
export const SLA_RECOMPUTE_TIMER = 'sla-recompute';
const PAGE_SIZE = 200;

/**
 * A change of business hours moves every deadline that counts them: their open conversations are computed again,
 * PAGE_SIZE per firing of a durable timer that carries its place (the last id done) and sets itself again until the
 * last page, so a crash resumes where it stopped and a new change restarts from the first. A deadline that moved
 * later is also corrected when its timer fires (SlaDeadlines), should this run not have reached it yet.
 */
@Injectable()
export class SlaRecompute implements OnModuleInit {
  constructor(
    private readonly timers: DurableTimers,
    private readonly conversations: ConversationsRepository,
    private readonly tracker: SlaTracker,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timers.register<{ after: string | null }>(SLA_RECOMPUTE_TIMER, (timer) => this.run(timer));
  }

  async schedule(companyId: CompanyId): Promise<void> {
    await this.timers.set(companyId, SLA_RECOMPUTE_TIMER, String(companyId), this.clock.now(), { after: null });
  }

  private async run(timer: FiredTimer<{ after: string | null }>): Promise<void> {
    const after = timer.payload.after ? parseObjectId(timer.payload.after) : null;
    const ids = await this.conversations.withBusinessHoursSla(timer.companyId, after, PAGE_SIZE);
    for (const id of ids) await this.tracker.recompute(timer.companyId, id);
    if (ids.length === PAGE_SIZE) {
      await this.timers.set(timer.companyId, SLA_RECOMPUTE_TIMER, timer.key, this.clock.now(), { after: ids.at(-1)!.toHexString() });
    }
  }
}
