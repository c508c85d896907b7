import { HttpException, Injectable } from '@nestjs/common';
import type { Types } from 'mongoose';
import pMap from 'p-map';
import { AgentsRepository } from '../agents/agents.repository.js';
import type { ConversationView } from '../conversations/conversation.view.js';
import type { Conversation } from '../conversations/conversation.schema.js';
import { ConversationQueueRepository, type QueuePosition } from '../conversations/conversation-queue.repository.js';
import { ConversationsService, type AssignmentActor, type EventOptions } from '../conversations/conversations.service.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import type { AssignmentStrategy } from '../settings/settings.schema.js';
import { SettingsService } from '../settings/settings.service.js';
import { TeamsRepository } from '../teams/teams.repository.js';
import { candidateOf, channelCapacityOf, chooseAgent, countIn, countOut, type Candidate, type Need } from './assignment-rules.js';
import { AgentLoadRepair, holdWindowOf } from './agent-load-repair.js';

/** Conversations read from a queue at a time. */
const QUEUE_PAGE = 200;
/**
 * Decisions of a pass in flight at once, so that their events share the relay's appends and the consumers' turns
 * (one at a time, each assignment was relayed and consumed alone). The order stays fair: decisions start in queue
 * order, and each agent's room is counted as it is chosen.
 */
const DECISIONS_IN_FLIGHT = 8;

/**
 * One pass over the queues (or one `assign` step): the load repair's timers it has set, by window. A pass may outlast
 * a window, so each reservation is covered by the timer of its own stamp's window, set once per pass.
 */
interface Pass {
  covered: Map<number, Promise<void>>;
}

/** One queue to serve: the company's (teamId null, any agent) or a team's (its members). */
interface Queue {
  teamId: Types.ObjectId | null;
  strategy: AssignmentStrategy;
  members: ReadonlySet<string> | null;
}

/**
 * Routing (contract section 19): hands queued, awake conversations to eligible agents, each queue in the fair order
 * (priority, then oldest `queuedAt`), by the queue's strategy. The company queue (`teamId` null, the settings'
 * strategy, any agent) is one case of it. No lease and no count of the database per decision: an agent's load is a
 * counter on its record, and a decision is two conditional single-document writes, safe with any number of
 * processes and a `kill -9` between them:
 *   1. reserve: count the conversation in the agent's load only where the load is below its capacity (and the
 *      channel's below its limit), and the agent does not hold it yet;
 *   2. assign: only where the conversation is still `queued` (so never twice);
 *   and if 2 refuses, release the hold (idempotent). A process killed between 1 and 2 leaves a hold without an
 *   assignment: AgentLoadRepair's durable timer, set for the hold's window before the reservation, releases it.
 */
@Injectable()
export class AutoAssigner {
  /** Strictly increasing stamps, so two assignments in one millisecond still rotate in order. */
  private lastStamp = 0;

  constructor(
    private readonly queues: ConversationQueueRepository,
    private readonly agents: AgentsRepository,
    private readonly teams: TeamsRepository,
    private readonly settings: SettingsService,
    private readonly conversations: ConversationsService,
    private readonly repair: AgentLoadRepair,
    private readonly clock: Clock,
  ) {}

  /**
   * When auto-assignment is on, serves every routed queue (the company's, then each active team's that is not
   * `manual`) until it is empty or no eligible agent has room; answers how many were assigned. Safe to repeat and to
   * run in several processes at once; throws when the database fails (the consumer retries).
   */
  async serveQueue(companyId: CompanyId): Promise<number> {
    const config = await this.settings.autoAssignment(companyId);
    if (!config.enabled) return 0;
    const candidates = (await this.agents.findAssignable(companyId)).map((agent) => candidateOf(agent, config.maxConversationsPerAgent));
    if (candidates.length === 0) return 0;
    const queues: Queue[] = [{ teamId: null, strategy: config.strategy, members: null }];
    for (const team of await this.teams.all(companyId)) {
      if (!team.isActive || team.strategy === 'manual') continue;
      queues.push({ teamId: team._id, strategy: team.strategy, members: new Set(team.memberIds.map(String)) });
    }
    const pass: Pass = { covered: new Map() };
    let assigned = 0;
    for (const queue of queues) {
      const pool = queue.members ? candidates.filter((candidate) => queue.members!.has(candidate.agentId.toHexString())) : candidates;
      assigned += await this.serve(companyId, queue, pool, pass);
    }
    return assigned;
  }

  /**
   * The flow step `assign` without an agent: one conversation, by `strategy` or the company's, to any agent with room
   * and its skills (whether auto-assignment is on or not). Null when none has room.
   */
  async assignNext(
    companyId: CompanyId,
    conversationId: string,
    strategy: AssignmentStrategy | undefined,
    actor: AssignmentActor,
    options: EventOptions = {},
  ): Promise<ConversationView | null> {
    const config = await this.settings.autoAssignment(companyId);
    const conversation = await this.conversations.findStored(companyId, conversationId);
    const candidates = (await this.agents.findAssignable(companyId)).map((agent) => candidateOf(agent, config.maxConversationsPerAgent));
    const need = { channel: conversation.channel, requiredSkills: conversation.requiredSkills ?? [] };
    const pass: Pass = { covered: new Map() };
    for (;;) {
      const agent = chooseAgent(candidates, strategy ?? config.strategy, need);
      if (!agent) return null;
      const at = this.stamp();
      await this.cover(companyId, at, pass);
      if (!(await this.reserve(companyId, agent, conversation, at))) {
        agent.openConversations = agent.capacity;
        continue;
      }
      try {
        return await this.conversations.assign(companyId, conversation, { _id: agent.agentId, isActive: true }, actor, options);
      } catch (error) {
        await this.agents.release(companyId, agent.agentId, conversation._id, conversation.channel);
        throw error;
      }
    }
  }

  private async serve(companyId: CompanyId, queue: Queue, pool: Candidate[], pass: Pass): Promise<number> {
    let assigned = 0;
    let after: QueuePosition | null = null;
    while (pool.some((candidate) => candidate.openConversations < candidate.capacity)) {
      // Whole records: `assign` works from them (a record changed meanwhile fails its conditional write and is read again).
      const rows = await this.queues.queuePage(companyId, queue.teamId, after, QUEUE_PAGE);
      await pMap(
        rows,
        async (row) => {
          if (await this.route(companyId, queue, pool, row, pass)) assigned += 1;
        },
        { concurrency: DECISIONS_IN_FLIGHT, stopOnError: false },
      );
      if (rows.length < QUEUE_PAGE) break;
      const last = rows[rows.length - 1];
      after = { priority: last.priority, queuedAt: last.queuedAt!, id: last._id };
    }
    return assigned;
  }

  /**
   * Gives one conversation to the best eligible agent. The agent's room is counted as it is chosen, so that decisions
   * in flight together choose as one after the other would. An agent whose reservation is refused had its room taken
   * by another process: it is left out for the rest of this pass (the next pass reads it again).
   */
  private async route(companyId: CompanyId, queue: Queue, pool: Candidate[], row: Stored<Conversation>, pass: Pass): Promise<boolean> {
    const need: Need = { channel: row.channel, requiredSkills: row.requiredSkills ?? [] };
    for (;;) {
      const agent = chooseAgent(pool, queue.strategy, need);
      if (!agent) return false;
      const at = this.stamp();
      countIn(agent, row.channel, at);
      await this.cover(companyId, at, pass);
      if (!(await this.reserve(companyId, agent, row, at))) {
        agent.openConversations = agent.capacity;
        continue;
      }
      try {
        const actor = { kind: 'auto', id: null } as const;
        await this.conversations.assign(companyId, row, { _id: agent.agentId, isActive: true }, actor, { fromStatus: 'queued' });
      } catch (error) {
        // Left the queue meanwhile (assigned elsewhere, closed: a 4xx of the rules): give the room back.
        await this.agents.release(companyId, agent.agentId, row._id, row.channel);
        countOut(agent, row.channel);
        if (error instanceof HttpException && error.getStatus() < 500) return false;
        throw error;
      }
      return true;
    }
  }

  /** The time a reservation stamps on its agent (round robin order). */
  private stamp(): Date {
    this.lastStamp = Math.max(this.clock.now().getTime(), this.lastStamp + 1);
    return new Date(this.lastStamp);
  }

  /** Step 1: takes room on `agent` for the conversation, stamped `at`; false when the stored counters say it has none. */
  private async reserve(
    companyId: CompanyId,
    agent: Candidate,
    conversation: Pick<Stored<Conversation>, '_id' | 'channel'>,
    at: Date,
  ): Promise<boolean> {
    const limits = { capacity: agent.capacity, channelCapacity: channelCapacityOf(agent, conversation.channel) };
    return this.agents.reserve(companyId, agent.agentId, conversation._id, conversation.channel, limits, at);
  }

  /** Before a reservation stamped `at`, so that a process killed right after it still has its hold checked. */
  private cover(companyId: CompanyId, at: Date, pass: Pass): Promise<void> {
    const window = holdWindowOf(at);
    let covering = pass.covered.get(window);
    if (!covering) pass.covered.set(window, (covering = this.repair.cover(companyId, at)));
    return covering;
  }
}
