import { Injectable } from '@nestjs/common';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { UnreadableSecretError, WebhookSecretBox } from '../webhook-secret-box.js';
import type { WebhookDelivery } from '../webhook-delivery.schema.js';
import { WebhookDeliveriesRepository, type AttemptResult } from '../webhook-deliveries.repository.js';
import { deliveryPublicId } from '../webhook-ids.js';
import { WebhooksRepository } from '../webhooks.repository.js';
import { afterFailure, parseRetryAfter } from '../../lanes/retry-schedule.js';
import type { LaneTurn } from '../../lanes/lane-worker.js';
import type { Lane } from './webhook-delivery-lanes.js';
import { WebhookSender, type SendResult } from './webhook-sender.js';
import { signWebhook } from './webhook-signature.js';

export const USER_AGENT = 'Parley-Webhooks/1.0';

/** Statuses whose Retry-After sets the next attempt. */
const RETRY_AFTER_STATUSES = new Set([429, 503]);

/**
 * Attempts a claimed lane makes in a row before it is given up, so that the claim, the read of its queue
 * and the release are shared by many deliveries while other lanes still get their turn.
 */
export const MAX_ATTEMPTS_PER_CLAIM = 20;

const isDue = (delivery: Stored<WebhookDelivery>, now: number): boolean =>
  delivery.nextAttemptAt != null && delivery.nextAttemptAt.getTime() <= now;

/**
 * What the lane's queue looks like after an attempt: go on with the next delivery, wait (the head
 * failed and is due again `until`), or `unknown` (the delivery changed under the worker, or the
 * webhook was disabled): the lane is left due, and the next claim reads the queue afresh.
 */
type AfterAttempt = { next: 'continue' } | { next: 'wait'; until: Date } | { next: 'unknown' };

/** The lane's signing secret, or why it cannot be read (each attempt then records that error). */
type SigningSecret = { secret: string } | { error: string };

/**
 * One turn of a claimed lane. One read gives the deliveries pending when the turn began, in order;
 * they are attempted while the head is due (up to MAX_ATTEMPTS_PER_CLAIM, recording each attempt,
 * stopping at a failure, which leaves the head due later). Then the lane is given up with the time its
 * new head is due. That hint holds only if nothing was queued since the claim (its `queueVersion`);
 * otherwise the lane stays due and the next claim picks up what was queued meanwhile.
 */
@Injectable()
export class LaneRunner {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly sender: WebhookSender,
    private readonly secrets: WebhookSecretBox,
  ) {}

  async run(lane: Lane, turn: LaneTurn): Promise<void> {
    const queue = await this.deliveries.pendingInOrder(lane.companyId, lane._id, MAX_ATTEMPTS_PER_CLAIM + 1);
    // Decrypted once per turn and shared by its attempts.
    const secret = this.openSecret(lane);
    await turn.release(await this.attemptInOrder(lane, queue, secret, turn));
  }

  /** Attempts `queue` in order while its head is due; answers when the new head is due (`null`: unknown, `undefined`: none). */
  private async attemptInOrder(
    lane: Lane,
    queue: Stored<WebhookDelivery>[],
    secret: SigningSecret,
    turn: LaneTurn,
  ): Promise<Date | null | undefined> {
    for (let index = 0; index < queue.length; index += 1) {
      const head = queue[index];
      if (!isDue(head, Date.now()) || index === MAX_ATTEMPTS_PER_CLAIM || !turn.keepGoing()) return head.nextAttemptAt;
      // A further attempt first renews the lease, which also checks the lane is still ours and active.
      if (index > 0 && !(await turn.renew())) return null;
      const after = await this.attempt(lane, secret, head);
      if (after.next === 'wait') return after.until;
      if (after.next === 'unknown') return null;
    }
    return undefined;
  }

  private async attempt(lane: Lane, secret: SigningSecret, delivery: Stored<WebhookDelivery>): Promise<AfterAttempt> {
    const at = new Date();
    const sent = await this.send(lane, secret, deliveryPublicId(delivery._id), delivery.payload, at);
    const result = this.resultOf(lane, delivery, sent);
    const { statusCode, durationMs, error } = sent;
    const recorded = await this.deliveries.recordAttempt(lane.companyId, delivery, { at, statusCode, durationMs, error }, result);
    if (!recorded) return { next: 'unknown' };
    if (statusCode === 410) {
      await this.webhooks.disable(lane.companyId, lane._id, `The receiver answered 410 Gone on ${at.toISOString()}`);
      return { next: 'unknown' };
    }
    return result.status === 'pending' ? { next: 'wait', until: result.nextAttemptAt } : { next: 'continue' };
  }

  private openSecret(lane: Lane): SigningSecret {
    try {
      return { secret: this.secrets.open(lane.secret) };
    } catch (error) {
      if (!(error instanceof UnreadableSecretError)) throw error;
      return { error: error.message };
    }
  }

  private async send(lane: Lane, secret: SigningSecret, webhookId: string, body: string, at: Date): Promise<SendResult> {
    if ('error' in secret) return { statusCode: null, durationMs: 0, error: secret.error };
    const timestamp = Math.floor(at.getTime() / 1000);
    return this.sender.post(
      lane.url,
      {
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
        'webhook-id': webhookId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signWebhook(secret.secret, webhookId, timestamp, body),
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
