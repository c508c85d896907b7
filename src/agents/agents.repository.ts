import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, Types } from 'mongoose';
import type { StagedAuditEntry } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { AgentView } from './agent.view.js';
import { Agent, channelLoadKey, type AgentStatus, type HeldConversation, type StatusChangeReason } from './agent.schema.js';

/** What routing reads of an agent that may receive conversations. */
export type AssignableAgent = Pick<
  Stored<Agent>,
  '_id' | 'lastAssignedAt' | 'capacity' | 'capacityByChannel' | 'skills' | 'loadTotal' | 'loadByChannel'
>;

/** The field path of a channel's load. */
function channelLoadField(channel: string): string {
  return `loadByChannel.${channelLoadKey(channel)}`;
}

/** The room routing takes from an agent: below `capacity` in all, and below `channelCapacity` on the channel when set. */
export interface LoadLimits {
  capacity: number;
  channelCapacity: number | null;
}

@Injectable()
export class AgentsRepository extends EventSourceRepository<Agent> {
  constructor(@InjectModel(Agent.name) model: Model<Agent>, relay: EventRelay) {
    super(model, relay);
  }

  /**
   * Sets the agent's status from `current.status` to `status`, with `agent.status_changed` in the same write; only if
   * it is still active and in that status (of two concurrent changes one applies). Null when it moved meanwhile.
   */
  async changeStatus(
    companyId: CompanyId,
    current: Stored<Agent>,
    status: AgentStatus,
    reason: StatusChangeReason,
    audit?: StagedAuditEntry,
  ): Promise<Stored<Agent> | null> {
    const updatedAt = new Date();
    const after = { ...current, status, updatedAt, pendingEvents: undefined } as Stored<Agent>;
    const event = stageEvent('agent.status_changed', { agent: AgentView.from(after), previousStatus: current.status, reason }, { occurredAt: updatedAt });
    return this.updateWithEvents(
      companyId,
      { _id: current._id, status: current.status, isActive: current.isActive } as QueryFilter<Agent>,
      withAuditOf({ $set: { status, updatedAt } }, audit),
      [event],
      { timestamps: false },
    );
  }

  /** Login is the one lookup made before the company is known: by e-mail, among agents that have a password. */
  async findLoginCandidate(email: string): Promise<Stored<Agent> | null> {
    return (await this.model
      .findOne({ email: email.trim().toLowerCase(), passwordHash: { $type: 'string' } })
      .select('+passwordHash')
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Stored<Agent> | null;
  }

  async isLoginEmailTaken(email: string): Promise<boolean> {
    return (await this.findLoginCandidate(email)) !== null;
  }

  /**
   * True when this call deactivated the agent, false when it was already inactive (or missing). Ends its tokens. Going
   * offline from another status is a status change by an admin, with `agent.status_changed`.
   */
  async deactivate(companyId: CompanyId, current: Stored<Agent>, audit?: StagedAuditEntry): Promise<boolean> {
    const updatedAt = new Date();
    const after = { ...current, isActive: false, status: 'offline', updatedAt, pendingEvents: undefined } as Stored<Agent>;
    const events =
      current.status === 'offline' ? [] : [stageEvent('agent.status_changed', { agent: AgentView.from(after), previousStatus: current.status, reason: 'admin' }, { occurredAt: updatedAt })];
    const updated = await this.updateWithEvents(
      companyId,
      { _id: current._id, isActive: true, status: current.status } as QueryFilter<Agent>,
      withAuditOf({ $set: { isActive: false, status: 'offline', updatedAt }, $inc: { tokenVersion: 1 } }, audit),
      events,
      { timestamps: false },
    );
    return updated !== null;
  }

  /**
   * A login's trace on the agent, written with its `auth.login` entry (and, when given, the password stored again at
   * today's cost) in one write. Through the driver: it changes nothing an access check reads (the token version stays),
   * so the access cache (AGENT_WRITES) stays warm, and it is no edit of the agent (`updatedAt` stays). False when the
   * agent is gone.
   */
  async recordLogin(companyId: CompanyId, agentId: Types.ObjectId, entry: StagedAuditEntry, passwordHash?: string): Promise<boolean> {
    const set = passwordHash === undefined ? { lastLoginAt: entry.at } : { lastLoginAt: entry.at, passwordHash };
    return (await this.updateAsIs(companyId, { _id: agentId }, withAudit({ $set: set, $inc: { loginCount: 1 } }, entry))) !== null;
  }

  /** A refused login's trace (wrong password, or a deactivated agent), written with its `auth.login_failed` entry. */
  async recordFailedLogin(companyId: CompanyId, agentId: Types.ObjectId, entry: StagedAuditEntry): Promise<boolean> {
    const update = withAudit({ $set: { lastFailedLoginAt: entry.at }, $inc: { failedLoginCount: 1 } }, entry);
    return (await this.updateAsIs(companyId, { _id: agentId }, update)) !== null;
  }

  async countActiveAdmins(companyId: CompanyId): Promise<number> {
    return this.count(companyId, { role: 'admin', isActive: true });
  }

  /** Who may receive conversations automatically: active and online. */
  async findAssignable(companyId: CompanyId): Promise<AssignableAgent[]> {
    return this.findPlain(
      companyId,
      { isActive: true, status: 'online' },
      { projection: { _id: 1, lastAssignedAt: 1, capacity: 1, capacityByChannel: 1, skills: 1, loadTotal: 1, loadByChannel: 1 } },
    );
  }

  /**
   * Takes room for `conversation` on the agent, in one conditional write: only while it is active, online, below
   * `limits` and not holding that conversation already; stamps `lastAssignedAt` (round robin). False when it has no
   * room (any process may have taken it meanwhile): the capacity rule holds whatever runs concurrently.
   */
  async reserve(companyId: CompanyId, agentId: Types.ObjectId, conversation: Types.ObjectId, channel: string, limits: LoadLimits, at: Date): Promise<boolean> {
    const filter: Record<string, unknown> = {
      _id: agentId,
      isActive: true,
      status: 'online',
      // `$not $gte` also matches a record without the counter (nothing held yet).
      loadTotal: { $not: { $gte: limits.capacity } },
      'held.c': { $ne: conversation },
    };
    if (limits.channelCapacity !== null) filter[channelLoadField(channel)] = { $not: { $gte: limits.channelCapacity } };
    return this.addHeld(companyId, filter, { c: conversation, ch: channel, at }, { lastAssignedAt: at });
  }

  /** Counts `conversation` in the agent's load whatever its capacity (a person assigned it); once only. */
  async hold(companyId: CompanyId, agentId: Types.ObjectId, conversation: Types.ObjectId, channel: string, at: Date): Promise<boolean> {
    return this.addHeld(companyId, { _id: agentId, 'held.c': { $ne: conversation } }, { c: conversation, ch: channel, at });
  }

  /** Takes `conversation` out of the agent's load if it is in it; safe to repeat. */
  async release(companyId: CompanyId, agentId: Types.ObjectId, conversation: Types.ObjectId, channel: string): Promise<boolean> {
    const result = await this.model
      .updateOne(
        this.scope(companyId, { _id: agentId, 'held.c': conversation } as QueryFilter<Agent>),
        { $pull: { held: { c: conversation } }, $inc: { loadTotal: -1, [channelLoadField(channel)]: -1 } },
        { timestamps: false },
      )
      .exec();
    return result.modifiedCount === 1;
  }

  /** Agents with holds taken from `from` until before `until`, with those holds (AgentLoadRepair checks them). */
  async holdsBetween(companyId: CompanyId, from: Date, until: Date, limit: number): Promise<{ agentId: Types.ObjectId; held: HeldConversation[] }[]> {
    const window = { $gte: from, $lt: until };
    const rows = await this.findPlain(companyId, { held: { $elemMatch: { at: window } } }, { projection: { _id: 1, held: 1 }, limit });
    return rows.map((row) => ({ agentId: row._id, held: (row.held ?? []).filter((entry) => entry.at >= from && entry.at < until) }));
  }

  /** A load write: bookkeeping, not a change of the agent as the API dates it (updatedAt stays). */
  private async addHeld(companyId: CompanyId, filter: Record<string, unknown>, entry: HeldConversation, set: Record<string, unknown> = {}): Promise<boolean> {
    const result = await this.model
      .updateOne(
        this.scope(companyId, filter as QueryFilter<Agent>),
        { $push: { held: entry }, $inc: { loadTotal: 1, [channelLoadField(entry.ch)]: 1 }, ...(Object.keys(set).length ? { $set: set } : {}) },
        { timestamps: false },
      )
      .exec();
    return result.modifiedCount === 1;
  }
}

/** The update with the audit entry written in the same single-document write, when there is one. */
function withAuditOf<U extends Record<string, unknown>>(update: U, audit: StagedAuditEntry | undefined): U {
  return audit ? withAudit(update, audit) : update;
}
