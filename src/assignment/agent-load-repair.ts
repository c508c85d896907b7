import { Injectable, type OnModuleInit } from '@nestjs/common';
import { AgentsRepository } from '../agents/agents.repository.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';

export const HOLD_CHECK = 'routing-hold-check';
/** Reservations are checked per window of this length, each by one timer. */
const WINDOW_MS = 30_000;
/** Far longer than a reservation's two writes take; a hold this old without its assignment never gets it. */
const GRACE_MS = 30_000;
const MAX_AGENTS = 1000;

/** The start of the window whose timer checks a hold stamped `at`. */
export function holdWindowOf(at: Date): number {
  return Math.floor(at.getTime() / WINDOW_MS) * WINDOW_MS;
}

interface HoldCheck {
  from: number;
  until: number;
}

/**
 * Undoes reservations whose assignment was never written: routing reserves room on an agent, then assigns, and a
 * process killed between the two leaves the agent holding a conversation that is not its own. Before reserving, routing
 * makes sure a durable timer covers the window of the hold's stamp (one timer per company and 30 s window, set once
 * per pass and window); when it fires, each hold taken in that window whose conversation is not an open `human` one
 * of that agent is released. Releasing is idempotent, so the timer may fire again after a crash.
 */
@Injectable()
export class AgentLoadRepair implements OnModuleInit {
  constructor(
    private readonly timers: DurableTimers,
    private readonly agents: AgentsRepository,
    private readonly conversations: ConversationsRepository,
  ) {}

  onModuleInit(): void {
    this.timers.register<HoldCheck>(HOLD_CHECK, (timer) => this.check(timer));
  }

  /** Makes sure the holds stamped `at` are checked once they are old enough. */
  async cover(companyId: CompanyId, at: Date): Promise<void> {
    const from = holdWindowOf(at);
    const until = from + WINDOW_MS;
    await this.timers.setNoLaterThan(companyId, HOLD_CHECK, `${String(companyId)}.${from}`, new Date(until + GRACE_MS), { from, until });
  }

  private async check(timer: FiredTimer<HoldCheck>): Promise<void> {
    const { companyId } = timer;
    const from = new Date(timer.payload.from);
    const until = new Date(timer.payload.until);
    for (const { agentId, held: taken } of await this.agents.holdsBetween(companyId, from, until, MAX_AGENTS)) {
      const own = await this.conversations.findPlain(
        companyId,
        { _id: { $in: taken.map((entry) => entry.c) }, assignedAgentId: agentId, status: 'human' },
        { projection: { _id: 1 }, limit: taken.length },
      );
      const kept = new Set(own.map((row) => row._id.toHexString()));
      for (const entry of taken) {
        if (!kept.has(entry.c.toHexString())) await this.agents.release(companyId, agentId, entry.c, entry.ch);
      }
    }
  }
}
