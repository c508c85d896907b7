import { Injectable, type OnModuleInit } from '@nestjs/common';
import { ScheduledJobs } from '../lanes/scheduled-jobs.js';
import { EventRelay, type RelayItem } from './event-relay.js';

/** An event still pending this long after it occurred is taken for left behind: the relay logs within milliseconds. */
export const PENDING_EVENT_GRACE_MS = 15_000;
/** How often the deployment looks for events left behind. */
export const SWEEP_EVERY_MS = 5_000;
const SWEEP_BATCH = 500;

/**
 * Relays the events that a process left pending on their documents when it died between a write and its
 * relay. A scheduled job, so one process sweeps at a time; the log refuses what it already holds, so an event
 * swept while its own relay was still under way is logged once all the same.
 */
@Injectable()
export class PendingEventSweep implements OnModuleInit {
  constructor(
    private readonly relay: EventRelay,
    private readonly jobs: ScheduledJobs,
  ) {}

  onModuleInit(): void {
    this.jobs.schedule('pending-event-sweep', SWEEP_EVERY_MS, async () => {
      await this.sweep(new Date());
    });
  }

  /**
   * Relays what has been pending since PENDING_EVENT_GRACE_MS before `now`, across every source in the order the
   * events occurred (a conversation's creation before the message that followed it); answers how many events.
   */
  async sweep(now: Date): Promise<number> {
    const before = new Date(now.getTime() - PENDING_EVENT_GRACE_MS);
    const stale: (RelayItem & { companyId: string; first: number })[] = [];
    for (const source of this.relay.registeredSources) {
      for (const { companyId, docId, events } of await source.findStalePending(before, SWEEP_BATCH)) {
        stale.push({ source, docId, events, companyId, first: Math.min(...events.map((event) => event.occurredAt.getTime())) });
      }
    }
    stale.sort((a, b) => a.first - b.first);
    const byCompany = new Map<string, RelayItem[]>();
    for (const { companyId, source, docId, events } of stale) byCompany.set(companyId, [...(byCompany.get(companyId) ?? []), { source, docId, events }]);
    await Promise.all([...byCompany].map(([companyId, items]) => this.relay.relay(companyId, items)));
    return stale.reduce((count, item) => count + item.events.length, 0);
  }
}
