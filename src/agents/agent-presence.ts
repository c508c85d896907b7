import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { BoundedMap } from '../common/bounded-map.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers, type FiredTimer } from '../lanes/durable-timers.js';
import { SettingsService } from '../settings/settings.service.js';
import { AgentsRepository } from './agents.repository.js';

export const AGENT_IDLE = 'agent-idle';
/** Presence is written at most this often per agent (and process): a busy agent's requests cost no writes. */
export const PRESENCE_WRITE_MS = 30_000;
const TRACKED_AGENTS = 100_000;

/**
 * Idle presence (contract section 19): with `autoAssignment.awayAfterIdleSeconds` set, an `online` agent with no
 * authenticated request and no open event stream (whose credential is checked again every few seconds, through the
 * same authentication) for that long becomes `away`, with `agent.status_changed` (reason `idle`), and so stops
 * receiving conversations. Each sign of life moves a durable timer per agent to the idle limit after it, at most once
 * per PRESENCE_WRITE_MS; the timer is set PRESENCE_WRITE_MS later than the limit, so that the signs not written can
 * only make the agent go away late, never early.
 */
@Injectable()
export class AgentPresence implements OnModuleInit {
  private readonly logger = new Logger(AgentPresence.name);
  /** When each agent's timer was last moved by this process. */
  private readonly written = new BoundedMap<string, number>(TRACKED_AGENTS);

  constructor(
    private readonly timers: DurableTimers,
    private readonly settings: SettingsService,
    private readonly agents: AgentsRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timers.register(AGENT_IDLE, (timer) => this.fire(timer));
  }

  /** A sign of life of the agent; never delays the request (a failure is logged, the next sign tries again). */
  seen(companyId: CompanyId, agentId: string): void {
    const now = this.clock.now().getTime();
    if (now - (this.written.get(agentId) ?? -Infinity) < PRESENCE_WRITE_MS) return;
    this.written.set(agentId, now);
    this.arm(companyId, agentId, now).catch((error: unknown) => {
      this.written.delete(agentId);
      this.logger.warn({ err: error }, `Could not record the presence of agent ${agentId}`);
    });
  }

  private async arm(companyId: CompanyId, agentId: string, now: number): Promise<void> {
    const idleSeconds = (await this.settings.autoAssignment(companyId)).awayAfterIdleSeconds ?? null;
    if (idleSeconds === null) return;
    await this.timers.set(companyId, AGENT_IDLE, agentId, new Date(now + idleSeconds * 1000 + PRESENCE_WRITE_MS));
  }

  /** Due: no sign of life moved it since. Only an agent still `online` (and idle presence still on) goes away. */
  private async fire(timer: FiredTimer): Promise<void> {
    if ((await this.settings.autoAssignment(timer.companyId)).awayAfterIdleSeconds == null) return;
    const agent = await this.agents.findById(timer.companyId, timer.key);
    if (!agent || !agent.isActive || agent.status !== 'online') return;
    await this.agents.changeStatus(timer.companyId, agent, 'away', 'idle');
  }
}
