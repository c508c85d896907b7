import { Injectable } from '@nestjs/common';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { UnreadableSecretError, WebhookSecretBox } from '../webhook-secret-box.js';
import type { WebhookDelivery } from '../webhook-delivery.schema.js';
import { WebhookDeliveriesRepository, type AttemptResult } from '../webhook-deliveries.repository.js';
import { deliveryPublicId } from '../webhook-ids.js';
import { WebhooksRepository } from '../webhooks.repository.js';
import { afterFailure, parseRetryAfter } from './retry-schedule.js';
import { WebhookLanesRepository, type Lane } from './webhook-lanes.repository.js';
import { WebhookSender, type SendResult } from './webhook-sender.js';
import { signWebhook } from './webhook-signature.js';

export const USER_AGENT = 'Parley-Webhooks/1.0';

/** Statuses whose Retry-After sets the next attempt. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * Attempts a claimed lane makes in a row before it is given up, so that the claim and release (four
 * database round trips) are shared by many deliveries while other lanes still get their turn.
 */
export const MAX_ATTEMPTS_PER_CLAIM = 20;

const isDue = (delivery: Stored<WebhookDelivery> | null): delivery is Stored<WebhookDelivery> =>
  delivery?.nextAttemptAt != null && delivery.nextAttemptAt.getTime() <= Date.now();

/**
 * One turn of a claimed lane: attempt its head delivery while one is due, in order, recording each
 * attempt (up to MAX_ATTEMPTS_PER_CLAIM, stopping at a failure, which leaves the head due later), then
 * give the lane up with the time its new head is due.
 */
@Injectable()
export class LaneRunner {
  constructor(
    private readonly lanes: WebhookLanesRepository,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly sender: WebhookSender,
    private readonly secrets: WebhookSecretBox,
  ) {}

  /** `leaseMs`: what the worker leases a lane for. `keepGoing`: false once the worker is shutting down. */
  async run(lane: Lane, { leaseMs, keepGoing }: { leaseMs: number; keepGoing: () => boolean }): Promise<void> {
    let head = await this.deliveries.head(lane.companyId, lane._id);
    for (let attempts = 0; attempts < MAX_ATTEMPTS_PER_CLAIM && isDue(head) && keepGoing(); attempts += 1) {
      // A further attempt first renews the lease, which also checks the lane is still ours and active.
      if (attempts > 0 && !(await this.lanes.renew(lane, new Date(), leaseMs))) break;
      if (!(await this.attempt(lane, head))) break;
      head = await this.deliveries.head(lane.companyId, lane._id);
    }
    // The version is read before the new head, so a delivery queued after this read is noticed.
    const version = await this.lanes.queueVersion(lane);
    const next = await this.deliveries.head(lane.companyId, lane._id);
    await this.lanes.release(lane, version, next?.nextAttemptAt ?? undefined);
  }

  /** False when the attempt disabled the webhook (410 Gone): nothing more goes to it. */
  private async attempt(lane: Lane, delivery: Stored<WebhookDelivery>): Promise<boolean> {
    const at = new Date();
    const sent = await this.send(lane, deliveryPublicId(delivery._id), delivery.payload, at);
    const result = this.resultOf(lane, delivery, sent);
    const { statusCode, durationMs, error } = sent;
    const recorded = await this.deliveries.recordAttempt(lane.companyId, delivery, { at, statusCode, durationMs, error }, result);
    if (recorded && statusCode === 410) {
      await this.webhooks.disable(lane.companyId, lane._id, `The receiver answered 410 Gone on ${at.toISOString()}`);
      return false;
    }
    return true;
  }

  private async send(lane: Lane, webhookId: string, body: string, at: Date): Promise<SendResult> {
    let secret: string;
    try {
      secret = this.secrets.open(lane.secret);
    } catch (error) {
      if (!(error instanceof UnreadableSecretError)) throw error;
      return { statusCode: null, durationMs: 0, error: error.message };
    }
    const timestamp = Math.floor(at.getTime() / 1000);
    return this.sender.post(
      lane.url,
      {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': webhookId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret, webhookId, timestamp, body),
      },
      body,
    );
  }

  /** 2xx succeeds; 410 fails for good (and disables the webhook); anything else is retried. */
  private resultOf(lane: Lane, delivery: Stored<WebhookDelivery>, sent: SendResult): AttemptResult {
    const { statusCode } = sent;
    if (statusCode !== null && statusCode >= 200 && statusCode < 300) return { status: 'succeeded' };
    if (statusCode === 410) return { status: 'failed' };
    const now = new Date();
    const retryAfterMs = RETRY_AFTER_STATUSES.has(statusCode ?? 0) ? parseRetryAfter(sent.retryAfter, now) : undefined;
    return afterFailure(delivery.attemptCount + 1, lane.retryConfig, now, retryAfterMs);
  }
}
