import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../../database/tenancy/tenant-scope.plugin.js';
import { LANE_FREE, Webhook } from '../webhook.schema.js';

/** A webhook whose lane a worker holds, with what an attempt needs (the sealed secret included). */
export type Lane = Pick<Stored<Webhook>, '_id' | 'companyId' | 'url' | 'retryConfig' | 'secret' | 'leaseOwner' | 'queueVersion'>;

/**
 * The delivery lanes: one per webhook, held by at most one worker at a time through a lease on the
 * webhook document (owner + expiry), so deliveries to a webhook are attempted one at a time and in
 * order across every process, and a crashed worker's lanes are free again once its leases expire.
 */
@Injectable()
export class WebhookLanesRepository {
  constructor(@InjectModel(Webhook.name) private readonly model: Model<Webhook>) {}

  /**
   * Atomically leases the active lane that has been due longest. The one cross-tenant query of the
   * webhook module: the worker serves every company's webhooks, and learns the company from the
   * lane it claims (every later query of the attempt is scoped to it).
   */
  async claim(owner: string, now: Date, leaseMs: number): Promise<Lane | null> {
    return (await this.model
      .findOneAndUpdate(
        { isActive: true, nextDueAt: { $lte: now }, leaseUntil: { $lte: now } },
        { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) } },
        { sort: { nextDueAt: 1 }, returnDocument: 'after' },
      )
      // The whole webhook, secret included: an attempt needs most of it.
      .select('+secret')
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as Lane | null;
  }

  /**
   * Extends the lease by `leaseMs` for one more attempt. False when the lane is no longer this worker's
   * (its lease expired and another took it) or the webhook was paused or deleted meanwhile.
   */
  async renew(lane: Lane, now: Date, leaseMs: number): Promise<boolean> {
    const renewed = await this.model
      .updateOne(
        { _id: lane._id, companyId: lane.companyId, leaseOwner: lane.leaseOwner, isActive: true },
        { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
      )
      .exec();
    return renewed.matchedCount === 1;
  }

  /**
   * Gives the lane up, saying when its new head is due (`undefined`: nothing pending; `null`: not
   * known, so the lane keeps its earlier hint, due already). The hint is only written if nobody queued
   * anything since the lane was claimed (its `queueVersion` then); otherwise the lane keeps its earlier,
   * sooner hint, and the next claim looks again.
   */
  async release(lane: Lane, nextDueAt: Date | null | undefined): Promise<void> {
    const free = { leaseOwner: null, leaseUntil: LANE_FREE };
    const mine = { _id: lane._id, companyId: lane.companyId, leaseOwner: lane.leaseOwner };
    if (nextDueAt !== null) {
      const update = nextDueAt ? { $set: { ...free, nextDueAt } } : { $set: free, $unset: { nextDueAt: 1 } };
      const hinted = await this.model.updateOne({ ...mine, queueVersion: lane.queueVersion }, update).exec();
      if (hinted.matchedCount === 1) return;
    }
    await this.model.updateOne(mine, { $set: free }).exec();
  }
}
