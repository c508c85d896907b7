import { Injectable } from '@nestjs/common';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { UnreadableSecretError, WebhookSecretBox } from '../webhook-secret-box.js';
import type { WebhookDelivery } from '../webhook-delivery.schema.js';
import { WebhookDeliveriesRepository, type AttemptResult, type RecordedAttempt } from '../webhook-deliveries.repository.js';
import { deliveryPublicId } from '../webhook-ids.js';
import { WebhooksRepository } from '../webhooks.repository.js';
import { afterFailure, parseRetryAfter } from '../../lanes/retry-schedule.js';
import type { LaneTurn } from '../../lanes/lane-worker.js';
import { Metrics } from '../../metrics/metrics.js';
import { contextOfTraceParent, tracer } from '../../tracing/trace-context.js';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
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
export const MAX_ATTEMPTS_PER_CLAIM = 50;

/**
 * How long, and for how many attempts, a turn goes on without checking its lane (renewing the lease, which fails
 * once the webhook is paused or deleted or the lease was lost) and writing down the attempts made since the last
 * check: what a pause may still let out, and what a crash may make a receiver get again (same `webhook-id`).
 */
export const LANE_CHECK_MS = 200;
export const LANE_CHECK_ATTEMPTS = 20;

const isDue = (delivery: Stored<WebhookDelivery>, now: number): boolean =>
  delivery.nextAttemptAt != null && delivery.nextAttemptAt.getTime() <= now;

/**
 * How a turn ends: when the lane's head is next due (`undefined`: nothing pending; `null`: unknown, as when the lane
 * was paused, deleted or lost meanwhile, so it is left due and the next claim reads afresh), and whether the
 * receiver answered 410 Gone (the webhook is then disabled).
 */
interface TurnEnd {
  next: Date | null | undefined;
  gone?: boolean;
}

/** The lane's signing secret, or why it cannot be read (each attempt then records that error). */
type SigningSecret = { secret: string } | { error: string };

/**
 * One turn of a claimed lane. One read gives the deliveries pending when the turn began, in order; they are
 * attempted while the head is due (up to MAX_ATTEMPTS_PER_CLAIM, stopping at a failure, which leaves the head due
 * later). The attempts are written down together: at each check of the lane (after LANE_CHECK_ATTEMPTS attempts
 * or LANE_CHECK_MS, whichever comes first; it also renews the lease) and when the turn ends, so a fast receiver
 * costs one write per few deliveries, not two per delivery. Then the lane is given up with the time its new head is due. That hint holds only if
 * nothing was queued since the claim (its `queueVersion`), and only if every attempt was recorded on the
 * delivery as read; otherwise the lane stays due and the next claim picks up what changed meanwhile.
 */
@Injectable()
export class LaneRunner {
  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly webhooks: WebhooksRepository,
    private readonly sender: WebhookSender,
    private readonly secrets: WebhookSecretBox,
    private readonly metrics: Metrics,
  ) {}

  async run(lane: Lane, turn: LaneTurn): Promise<void> {
    const queue = await this.deliveries.pendingInOrder(lane.companyId, lane._id, MAX_ATTEMPTS_PER_CLAIM + 1);
    // Decrypted once per turn and shared by its attempts.
    const secret = this.openSecret(lane);
    const made: RecordedAttempt[] = [];
    const ended = await this.attemptInOrder(lane, queue, secret, turn, made);
    const lastAt = made.at(-1)?.attempt.at;
    const recorded = await this.deliveries.recordAttempts(lane.companyId, made);
    if (recorded && ended.gone && lastAt) {
      await this.webhooks.disable(lane.companyId, lane._id, `The receiver answered 410 Gone on ${lastAt.toISOString()}`);
    }
    await turn.release(recorded && !ended.gone ? ended.next : null);
  }

  /** Attempts `queue` in order while its head is due; `made` collects the attempts not yet written down. */
  private async attemptInOrder(
    lane: Lane,
    queue: Stored<WebhookDelivery>[],
    secret: SigningSecret,
    turn: LaneTurn,
    made: RecordedAttempt[],
  ): Promise<TurnEnd> {
    let checkedAt = Date.now();
    for (let index = 0; index < queue.length; index += 1) {
      const head = queue[index];
      if (!isDue(head, Date.now()) || index === MAX_ATTEMPTS_PER_CLAIM || !turn.keepGoing()) return { next: head.nextAttemptAt };
      if (made.length >= LANE_CHECK_ATTEMPTS || Date.now() - checkedAt >= LANE_CHECK_MS) {
        // The lease outlasts an attempt and the writes around it, so checking now and then is enough to keep it.
        const [kept, recorded] = await Promise.all([turn.renew(), this.deliveries.recordAttempts(lane.companyId, made.splice(0))]);
        if (!kept || !recorded) return { next: null };
        checkedAt = Date.now();
      }
      const attempt = await this.attempt(lane, secret, head);
      made.push(attempt);
      if (attempt.attempt.statusCode === 410) return { next: null, gone: true };
      if (attempt.result.status === 'pending') return { next: attempt.result.nextAttemptAt };
    }
    return { next: undefined };
  }

  private async attempt(lane: Lane, secret: SigningSecret, delivery: Stored<WebhookDelivery>): Promise<RecordedAttempt> {
    const at = new Date();
    // The attempt continues the trace of the request that caused the event (tracing off: a no-op span).
    const span = tracer.startSpan(
      'webhook delivery',
      { kind: SpanKind.CLIENT, attributes: { 'parley.webhook.id': String(lane._id), 'parley.event.id': delivery.eventId, 'http.request.method': 'POST' } },
      contextOfTraceParent(delivery.trace),
    );
    const sent = await context.with(trace.setSpan(context.active(), span), () =>
      this.send(lane, secret, deliveryPublicId(delivery._id), delivery.payload, at),
    );
    const { statusCode, durationMs, error } = sent;
    if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
    if (statusCode === null || statusCode >= 300) span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? `HTTP ${statusCode}` });
    span.end();
    const result = this.resultOf(lane, delivery, sent);
    this.metrics.countWebhookAttempt(result.status === 'pending' ? 'retrying' : result.status, statusCode);
    return { delivery, attempt: { at, statusCode, durationMs, error }, result };
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
        ...traceHeaders(),
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

/** The W3C trace headers of the attempt's span, so that the receiver can continue the trace (none when tracing is off). */
function traceHeaders(): Record<string, string> {
  const headers: Record<string, string> = {};
  propagation.inject(context.active(), headers);
  return headers;
}
