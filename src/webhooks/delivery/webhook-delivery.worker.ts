import { Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationBootstrap } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { AppConfig } from '../../config/app-config.js';
import { LaneRunner } from './lane-runner.js';
import { WebhookLanesRepository } from './webhook-lanes.repository.js';

/** How often lanes are looked for when nothing in this process said so (other processes, retries). */
export const POLL_INTERVAL_MS = 250;
/** Attempts in flight at once in this process; each webhook has at most one anywhere. */
export const MAX_IN_FLIGHT = 16;

/**
 * Delivers the outbox. It claims due lanes (WebhookLanesRepository: one lease per webhook, so a
 * slow or failing endpoint holds up only its own deliveries) and runs up to MAX_IN_FLIGHT of them
 * at once. It looks for work when this process queues some (`wake`) and on a short poll. On
 * shutdown it stops claiming and waits for its attempts, each bounded by WEBHOOK_TIMEOUT_MS; every
 * lane is released as its attempt ends.
 */
@Injectable()
export class WebhookDeliveryWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  /** The lease owner: unique per worker, and says where it runs. */
  readonly id = `${hostname()}/${process.pid}/${randomBytes(4).toString('hex')}`;
  private readonly logger = new Logger(WebhookDeliveryWorker.name);
  private readonly leaseMs: number;
  private readonly inFlight = new Set<Promise<void>>();
  private running = false;
  private pumping: Promise<void> | null = null;
  private pumpAgain = false;
  private poll?: NodeJS.Timeout;

  constructor(
    config: AppConfig,
    private readonly lanes: WebhookLanesRepository,
    private readonly runner: LaneRunner,
  ) {
    // An attempt lasts at most the timeout; the lease leaves as much again for the writes around it.
    this.leaseMs = 2 * config.webhookTimeoutMs + 1000;
  }

  onApplicationBootstrap(): void {
    this.running = true;
    this.poll = setInterval(() => this.wake(), POLL_INTERVAL_MS).unref();
    this.wake();
  }

  /** Looks for due lanes now, or right after the search already under way. */
  wake(): void {
    if (!this.running) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = null;
      if (this.pumpAgain) this.wake();
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    clearInterval(this.poll);
    await this.pumping;
    await Promise.allSettled([...this.inFlight]);
  }

  private async pump(): Promise<void> {
    this.pumpAgain = false;
    try {
      while (this.running && this.inFlight.size < MAX_IN_FLIGHT) {
        const lane = await this.lanes.claim(this.id, new Date(), this.leaseMs);
        if (!lane) return;
        this.track(this.runner.run(lane, { leaseMs: this.leaseMs, keepGoing: () => this.running }));
      }
    } catch (error) {
      // The database is unreachable or failing: the next poll tries again.
      this.logger.error({ err: error }, 'Could not claim webhook deliveries');
    }
  }

  private track(run: Promise<void>): void {
    const tracked: Promise<void> = run
      .catch((error: unknown) => {
        // The lane stays leased until its lease expires, then any worker takes it up again.
        this.logger.error({ err: error }, 'A webhook delivery attempt failed to complete');
      })
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wake();
      });
    this.inFlight.add(tracked);
  }
}
