import type { Model, QueryFilter, UpdateQuery } from 'mongoose';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
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
  /** Fields to read at the claim that the schema hides by default (e.g. `+secret`). */
  select?: string;
}

/**
 * Claims, renews and releases the lanes kept in one collection (documents extending LaneFields). A claim is
 * one atomic findOneAndUpdate on a due, unleased lane, so two workers never hold one lane; a crashed worker's
 * lanes are claimable again once their leases expire. The claim is the one cross-tenant query of a lane
 * collection: workers serve every company and learn it from the lane they claim.
 */
export class LaneStore<T extends LaneFields> {
  constructor(
    private readonly model: Model<T>,
    private readonly options: LaneStoreOptions<T> = {},
  ) {}

  /** Leases the eligible lane that has been due longest, or answers null when none is due. */
  async claim(owner: string, now: Date, leaseMs: number): Promise<ClaimedLane<T> | null> {
    const query = this.model
      .findOneAndUpdate(
        { ...this.eligible(), nextDueAt: { $lte: now }, leaseUntil: { $lte: now } } as QueryFilter<T>,
        { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) } } as UpdateQuery<T>,
        { sort: { nextDueAt: 1 }, returnDocument: 'after' },
      )
      .setOptions({ [CROSS_TENANT]: true });
    if (this.options.select) query.select(this.options.select);
    return (await query.lean().exec()) as ClaimedLane<T> | null;
  }

  /**
   * Extends the lease by `leaseMs`. False when the lane is no longer this worker's (its lease expired and
   * another took it) or no longer eligible (a webhook paused or deleted meanwhile).
   */
  async renew(lane: ClaimedLane<T>, now: Date, leaseMs: number): Promise<boolean> {
    const renewed = await this.model
      .updateOne({ ...this.eligible(), ...this.held(lane) }, { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } } as UpdateQuery<T>)
      .exec();
    return renewed.matchedCount === 1;
  }

  /**
   * Gives the lane up, saying when it is next due (`undefined`: nothing pending; `null`: not known, so the
   * lane keeps its earlier hint, due already) and applying `update` with the release. The hint is written only
   * if nobody queued work since the claim (the claim's queueVersion); otherwise the lane keeps its sooner
   * hint and the next claim looks again. Answers whether the lane may be due already (so worth claiming again now).
   */
  async release(lane: ClaimedLane<T>, nextDueAt: Date | null | undefined, update: Record<string, unknown> = {}): Promise<boolean> {
    const free = { ...update, leaseOwner: null, leaseUntil: LANE_FREE };
    if (nextDueAt !== null) {
      const hinted = nextDueAt ? { $set: { ...free, nextDueAt } } : { $set: free, $unset: { nextDueAt: 1 } };
      const result = await this.model.updateOne({ ...this.held(lane), queueVersion: lane.queueVersion }, hinted as UpdateQuery<T>).exec();
      if (result.matchedCount === 1) return nextDueAt !== undefined && nextDueAt.getTime() <= Date.now();
    }
    await this.model.updateOne(this.held(lane), { $set: free } as UpdateQuery<T>).exec();
    return true;
  }

  /**
   * Deletes the lane whose work is done, if this worker still holds it and nobody queued work since the claim.
   * False otherwise: the lane stays, with whatever was queued meanwhile.
   */
  async remove(lane: ClaimedLane<T>): Promise<boolean> {
    const removed = await this.model.deleteOne({ ...this.held(lane), queueVersion: lane.queueVersion }).exec();
    return removed.deletedCount === 1;
  }

  private eligible(): QueryFilter<T> {
    const { eligible } = this.options;
    return typeof eligible === 'function' ? eligible() : (eligible ?? {});
  }

  /** The lane, as long as this worker holds it (with its company, for the tenant filter). */
  private held(lane: ClaimedLane<T>): QueryFilter<T> {
    const filter: Record<string, unknown> = { _id: lane._id, leaseOwner: lane.leaseOwner };
    if (lane.companyId) filter.companyId = lane.companyId;
    return filter as QueryFilter<T>;
  }
}
