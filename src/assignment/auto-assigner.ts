import { HttpException, Injectable, ServiceUnavailableException } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Types } from 'mongoose';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConversationsService, type AssignmentActor, type EventOptions } from '../conversations/conversations.service.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import type { AssignmentStrategy } from '../settings/settings.schema.js';
import { SettingsService } from '../settings/settings.service.js';
import { chooseAgent, type Candidate } from './assignment-rules.js';
import { AssignmentLeaseRepository } from './assignment-lease.repository.js';

/** Long enough for one pass over a batch; a crashed holder blocks its company for at most this. */
const LEASE_TTL_MS = 10_000;
/** How long a caller waits for the lease before giving up. */
const LEASE_WAIT_MS = 5_000;
const QUEUE_BATCH = 100;

/**
 * Hands conversations to available agents: active, online, with fewer open `human` conversations
 * than the company's `maxConversationsPerAgent`, chosen by round robin or least busy. Every choice is
 * made under the company's assignment lease, so concurrent hand-offs (in any process) see each
 * other's assignments and never push an agent over capacity. Capacity governs automatic choices
 * only: an explicit assignment to a named agent is not limited by it.
 */
@Injectable()
export class AutoAssigner {
  /** Strictly increasing stamps, so two assignments in one millisecond still rotate in order. */
  private lastStamp = 0;

  constructor(
    private readonly leases: AssignmentLeaseRepository,
    private readonly workload: ConversationsRepository,
    private readonly agents: AgentsRepository,
    private readonly settings: SettingsService,
    private readonly conversations: ConversationsService,
  ) {}

  /**
   * When auto-assignment is on, assigns queued conversations, oldest first, until the queue is empty
   * or every agent is at capacity; answers how many were assigned. Run by AutoAssignmentConsumer when a
   * conversation enters the queue and when an agent gains room; it throws when the database or the lease
   * fails, and the consumer retries (a conversation assigned meanwhile has left the queue and is skipped).
   */
  async serveQueue(companyId: CompanyId): Promise<number> {
    const config = await this.settings.autoAssignment(companyId);
    if (!config.enabled) return 0;
    return this.underLease(companyId, async () => {
      const queued = await this.workload.queued(companyId, QUEUE_BATCH);
      if (queued.length === 0) return 0;
      const candidates = await this.candidates(companyId);
      let assigned = 0;
      for (const conversationId of queued) {
        const agent = chooseAgent(candidates, config.strategy, config.maxConversationsPerAgent);
        if (!agent) break;
        if (await this.tryAssign(companyId, conversationId, agent)) assigned += 1;
      }
      return assigned;
    });
  }

  /**
   * The flow step `assign` without an agent: one conversation, by `strategy` or the company's, within
   * the company's capacity (whether auto-assignment is on or not). Null when every agent is full.
   */
  async assignNext(
    companyId: CompanyId,
    conversationId: string,
    strategy: AssignmentStrategy | undefined,
    actor: AssignmentActor,
    options: EventOptions = {},
  ): Promise<ConversationView | null> {
    const config = await this.settings.autoAssignment(companyId);
    return this.underLease(companyId, async () => {
      const agent = chooseAgent(await this.candidates(companyId), strategy ?? config.strategy, config.maxConversationsPerAgent);
      if (!agent) return null;
      const conversation = await this.conversations.assign(companyId, conversationId, agent.agentId.toHexString(), actor, options);
      await this.recordAssignment(companyId, agent);
      return conversation;
    });
  }

  private async candidates(companyId: CompanyId): Promise<Candidate[]> {
    const agents = await this.agents.findAssignable(companyId);
    const open = await this.workload.openConversationsByAgent(
      companyId,
      agents.map((agent) => agent._id),
    );
    return agents.map((agent) => ({
      agentId: agent._id,
      openConversations: open.get(agent._id.toHexString()) ?? 0,
      lastAssignedAt: agent.lastAssignedAt ?? null,
    }));
  }

  /** A conversation that left the queue meanwhile (assigned, closed) is skipped: 4xx from the rules. */
  private async tryAssign(companyId: CompanyId, conversationId: Types.ObjectId, agent: Candidate): Promise<boolean> {
    try {
      const actor = { kind: 'auto', id: null } as const;
      await this.conversations.assign(companyId, conversationId.toHexString(), agent.agentId.toHexString(), actor, { fromStatus: 'queued' });
    } catch (error) {
      if (error instanceof HttpException && error.getStatus() < 500) return false;
      throw error;
    }
    await this.recordAssignment(companyId, agent);
    return true;
  }

  private async recordAssignment(companyId: CompanyId, agent: Candidate): Promise<void> {
    this.lastStamp = Math.max(Date.now(), this.lastStamp + 1);
    agent.lastAssignedAt = new Date(this.lastStamp);
    agent.openConversations += 1;
    await this.agents.markAssigned(companyId, agent.agentId, agent.lastAssignedAt);
  }

  private async underLease<T>(companyId: CompanyId, work: () => Promise<T>): Promise<T> {
    const holder = randomUUID();
    const deadline = Date.now() + LEASE_WAIT_MS;
    while (!(await this.leases.claim(companyId, holder, LEASE_TTL_MS))) {
      if (Date.now() >= deadline) throw new ServiceUnavailableException('Assignment is busy; try again');
      await sleep(5 + Math.random() * 20);
    }
    try {
      return await work();
    } finally {
      await this.leases.release(companyId, holder);
    }
  }
}
