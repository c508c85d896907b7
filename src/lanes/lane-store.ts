import type { Collection, Document, Filter } from 'mongodb';
import type { Model, QueryFilter, UpdateQuery } from 'mongoose';
import { LANE_FREE, type ClaimedLane, type LaneFields } from './lane.schema.js';

/**
 * The update that tells a lane it has work due from `at`: a new queueVersion (so a worker whose view of the
 * lane predates it notices) and a due time no later than `at`.
 */
export function markDueUpdate<T>(at: Date): UpdateQuery<T> {
  return { $inc: { queueVersion: 1 }, $min: { nextDueAt: at } } as UpdateQuery<T>;
}

export interface LaneStoreOptions<T> {
  /**
   * What a lane must also match to be claimed and to keep its lease (e.g. an active webhook, a consumer this
   * process runs); a function when it changes as the process registers work.
   */
  eligible?: QueryFilter<T> | (() => QueryFilter<T>);
}

/**
 * Claims, renews and releases the lanes kept in one collection (documents extending LaneFields). A claim is
 * one atomic findOneAndUpdate on a due, unleased lane, so two workers never hold one lane; a crashed worker's
 * lanes are claimable again once their leases expire. The claim is the one cross-tenant query of a lane
 * collection: workers serve every company and learn it from the lane they claim. Every write goes through the
 * driver, with values of their stored types (Dates, the lane's own ids): the worker makes several per turn, and
 * Mongoose's casting and middleware would only add to them.
 */
export class LaneStore<T extends LaneFields> {
  private readonly lanes: Collection;

  constructor(
    model: Model<T>,
    private readonly options: LaneStoreOptions<T> = {},
  ) {
    this.lanes = model.collection as unknown as Collection;
  }

  /** Leases the eligible lane that has been due longest (the whole document, hidden fields too), or null when none is due. */
  async claim(owner: string, now: Date, leaseMs: number): Promise<ClaimedLane<T> | null> {
    return (await this.lanes.findOneAndUpdate(
      { ...this.eligible(), nextDueAt: { $lte: now }, leaseUntil: { $lte: now } },
      { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) } },
      { sort: { nextDueAt: 1 }, returnDocument: 'after' },
    )) as ClaimedLane<T> | null;
  }

  /**
   * Extends the lease by `leaseMs`. False when the lane is no longer this worker's (its lease expired and
   * another took it) or no longer eligible (a webhook paused or deleted meanwhile).
   */
  async renew(lane: ClaimedLane<T>, now: Date, leaseMs: number): Promise<boolean> {
    const renewed = await this.lanes.updateOne({ ...this.eligible(), ...this.held(lane) }, { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } });
    return renewed.matchedCount === 1;
  }

  /**
   * Gives the lane up, saying when it is next due (`undefined`: nothing pending; `null`: not known, so the
   * lane keeps its earlier hint, due already) and applying `update` with the release. The hint is written only
   * if nobody queued work since the claim (the claim's queueVersion); otherwise the lane keeps its sooner
   * hint and the next claim looks again. Answers whether the lane may be due already at `now` (so worth claiming again).
   */
  async release(lane: ClaimedLane<T>, now: Date, nextDueAt: Date | null | undefined, update: Record<string, unknown> = {}): Promise<boolean> {
    const free = { ...update, leaseOwner: null, leaseUntil: LANE_FREE };
    if (nextDueAt !== null) {
      const hinted = nextDueAt ? { $set: { ...free, nextDueAt } } : { $set: free, $unset: { nextDueAt: 1 } };
      const result = await this.lanes.updateOne({ ...this.held(lane), queueVersion: lane.queueVersion }, hinted);
      if (result.matchedCount === 1) return nextDueAt !== undefined && nextDueAt.getTime() <= now.getTime();
    }
    await this.lanes.updateOne(this.held(lane), { $set: free });
    return true;
  }

  /**
   * Deletes the lane whose work is done, if this worker still holds it and nobody queued work since the claim.
   * False otherwise: the lane stays, with whatever was queued meanwhile.
   */
  async remove(lane: ClaimedLane<T>): Promise<boolean> {
    const removed = await this.lanes.deleteOne({ ...this.held(lane), queueVersion: lane.queueVersion });
    return removed.deletedCount === 1;
  }

  /**
   * The lanes due at `now` (held or not) and the earliest due time among them, grouped by the value of `labelField`
   * (one group, labelled by `fallback`, without it): what GET /metrics reports of the lanes' backlog. Like the claim,
   * it reads every company's lanes, on the same `nextDueAt` index.
   */
  async backlog(now: Date, fallback: string, labelField?: string): Promise<{ label: string; due: number; oldestDueAt: Date }[]> {
    const groups = await this.lanes
      .aggregate<{ _id: unknown; due: number; oldestDueAt: Date }>([
        { $match: { ...this.eligible(), nextDueAt: { $lte: now } } },
        { $group: { _id: labelField ? `$${labelField}` : null, due: { $sum: 1 }, oldestDueAt: { $min: '$nextDueAt' } } },
      ])
      .toArray();
    return groups.map((group) => ({ label: group._id == null ? fallback : String(group._id), due: group.due, oldestDueAt: group.oldestDueAt }));
  }

  private eligible(): Filter<Document> {
    const { eligible } = this.options;
    return (typeof eligible === 'function' ? eligible() : (eligible ?? {})) as Filter<Document>;
  }

  /** The lane, as long as this worker holds it (with its company, for the tenant filter). */
  private held(lane: ClaimedLane<T>): Filter<Document> {
    const filter: Record<string, unknown> = { _id: lane._id, leaseOwner: lane.leaseOwner };
    if (lane.companyId) filter.companyId = lane.companyId;
    return filter as Filter<Document>;
  }
}
