import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import { AppConfig } from '../../config/app-config.js';
import type { ClaimedLane } from '../../lanes/lane.schema.js';
import { LaneStore } from '../../lanes/lane-store.js';
import { LaneWorker } from '../../lanes/lane-worker.js';
import { Webhook } from '../webhook.schema.js';
import { LaneRunner } from './lane-runner.js';

/** A webhook whose lane a worker holds, with what an attempt needs (the sealed secret included). */
export type Lane = ClaimedLane<Webhook> & { _id: Types.ObjectId; companyId: Types.ObjectId };

/** Lane kind of webhook delivery in the LaneWorker. */
export const WEBHOOK_DELIVERY = 'webhook-delivery';
/** Attempts in flight at once in this process; each webhook has at most one anywhere. */
export const MAX_IN_FLIGHT = 16;

/**
 * Webhook delivery as a kind of lane: one lane per active webhook (its lease on the webhook document), so a
 * slow or failing endpoint holds up only its own deliveries, attempted one at a time and in order across every
 * process. The LaneWorker claims due lanes and runs their turns (LaneRunner).
 */
@Injectable()
export class WebhookDeliveryLanes implements OnModuleInit {
  readonly store: LaneStore<Webhook>;
  private readonly leaseMs: number;

  constructor(
    @InjectModel(Webhook.name) model: Model<Webhook>,
    config: AppConfig,
    private readonly worker: LaneWorker,
    private readonly runner: LaneRunner,
  ) {
    // The whole webhook, secret included, for active webhooks only: a paused one keeps its deliveries waiting, and
    // one being removed (removablePlugin: marked until its audit entry is chained) has none left.
    this.store = new LaneStore(model, { eligible: { isActive: true, removedAt: { $exists: false } } });
    // An attempt lasts at most the timeout; the lease leaves as much again for the writes around it.
    this.leaseMs = 2 * config.webhookTimeoutMs + 1000;
  }

  onModuleInit(): void {
    this.worker.register({
      name: WEBHOOK_DELIVERY,
      store: this.store,
      leaseMs: this.leaseMs,
      maxInFlight: MAX_IN_FLIGHT,
      run: (lane, turn) => this.runner.run(lane as Lane, turn),
    });
  }

  /** Looks for due deliveries now (after this process queued some). */
  wake(): void {
    this.worker.wake(WEBHOOK_DELIVERY);
  }
}
