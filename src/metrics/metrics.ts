import { Injectable, Logger } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { AppConfig } from '../config/app-config.js';
import { Clock } from '../lanes/clock.js';
import { LaneWorker } from '../lanes/lane-worker.js';

/** Seconds: from a fast read (1 ms) to a request at the webhook timeout's scale. */
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: the lane worker polls every second, so most lateness is below 1.5 s; past a minute is an incident. */
const LATENESS_BUCKETS = [0.1, 0.25, 0.5, 1, 1.5, 2, 5, 10, 30, 60, 300];
/** Seconds from a change's write to its events' append: milliseconds normally, the sweep's period after a crash. */
const RELAY_LAG_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 5, 30, 120];

/** A scrape asks both backlog gauges; within this, the second reuses the first's read. */
const BACKLOG_READ_REUSE_MS = 1000;

export type WebhookAttemptOutcome = 'succeeded' | 'retrying' | 'failed';

/**
 * The process's Prometheus metrics (prom-client), in a registry of the application's own: what GET /metrics serves.
 * Hot paths only touch a histogram child or a counter kept per label set; the lanes' backlog is read from the
 * database when a scrape asks, never on a clock.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly enabled: boolean;
  private readonly logger = new Logger(Metrics.name);
  private readonly httpDuration = new Histogram({
    name: 'parley_http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status: time from arrival to the end of the answer',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [this.registry],
  });
  /** One histogram child per route, method and status: prom-client would hash the label set on every observation. */
  private readonly httpChildren = new Map<string, { observe(value: number): void }>();
  private readonly timerLateness = new Histogram({
    name: 'parley_durable_timer_lateness_seconds',
    help: 'How long after its due time a durable timer fired, by kind',
    labelNames: ['kind'] as const,
    buckets: LATENESS_BUCKETS,
    registers: [this.registry],
  });
  private readonly webhookAttempts = new Counter({
    name: 'parley_webhook_attempts_total',
    help: 'Webhook delivery attempts by outcome (succeeded, retrying, failed for good) and response class',
    labelNames: ['outcome', 'response'] as const,
    registers: [this.registry],
  });
  private readonly relayLag = new Histogram({
    name: 'parley_event_relay_lag_seconds',
    help: 'Time from an event being staged with its change to its append to the event log',
    buckets: RELAY_LAG_BUCKETS,
    registers: [this.registry],
  });
  private openStreams: () => number = () => 0;

  constructor(config: AppConfig, worker: LaneWorker, clock: Clock) {
    this.enabled = config.metrics.enabled;
    if (!this.enabled) return;
    collectDefaultMetrics({ register: this.registry });
    const streams = () => this.openStreams();
    new Gauge({
      name: 'parley_event_streams_open',
      help: 'Event streams (Server-Sent Events) open in this process',
      registers: [this.registry],
      collect() {
        this.set(streams());
      },
    });
    // Both gauges are filled by one read of every kind's lanes per scrape, whichever of them asks first.
    let reading: Promise<void> | undefined;
    let readAt = 0;
    const read = () => {
      if (!reading || Date.now() - readAt > BACKLOG_READ_REUSE_MS) {
        readAt = Date.now();
        reading = this.readBacklog(worker, clock, backlog, oldest);
      }
      return reading;
    };
    const backlog = new Gauge({
      name: 'parley_lane_backlog',
      help: 'Lanes due now, by kind and lane (consumer, timer kind, job), across the deployment',
      labelNames: ['kind', 'lane'] as const,
      registers: [this.registry],
      collect: read,
    });
    const oldest = new Gauge({
      name: 'parley_lane_oldest_due_seconds',
      help: 'Age of the longest-due lane, by kind and lane, across the deployment (absent: nothing due)',
      labelNames: ['kind', 'lane'] as const,
      registers: [this.registry],
      collect: read,
    });
  }

  private async readBacklog(worker: LaneWorker, clock: Clock, backlog: Gauge<'kind' | 'lane'>, oldest: Gauge<'kind' | 'lane'>): Promise<void> {
    const now = clock.now();
    const groups = await Promise.all(
      worker.registeredKinds.map((kind) =>
        kind.store.backlog(now, kind.name, kind.backlogLabel).then(
          (found) => found.map((group) => ({ kind: kind.name, ...group })),
          (error: unknown) => {
            this.logger.warn({ err: error }, `Could not read the backlog of the ${kind.name} lanes`);
            return [];
          },
        ),
      ),
    );
    backlog.reset();
    oldest.reset();
    for (const group of groups.flat()) {
      backlog.set({ kind: group.kind, lane: group.label }, group.due);
      oldest.set({ kind: group.kind, lane: group.label }, Math.max(0, (now.getTime() - group.oldestDueAt.getTime()) / 1000));
    }
  }

  /** Where the number of open event streams is read at each scrape (EventStreams). */
  countOpenStreams(count: () => number): void {
    this.openStreams = count;
  }

  observeHttp(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let child = this.httpChildren.get(key);
    if (!child) {
      child = this.httpDuration.labels(route, method, String(status));
      this.httpChildren.set(key, child);
    }
    child.observe(seconds);
  }

  observeTimerLateness(kind: string, dueAt: Date, firedAt: Date): void {
    if (this.enabled) this.timerLateness.labels(kind).observe(Math.max(0, (firedAt.getTime() - dueAt.getTime()) / 1000));
  }

  countWebhookAttempt(outcome: WebhookAttemptOutcome, statusCode: number | null): void {
    if (this.enabled) this.webhookAttempts.labels(outcome, statusCode === null ? 'none' : `${Math.floor(statusCode / 100)}xx`).inc();
  }

  observeRelayLag(seconds: number): void {
    if (this.enabled) this.relayLag.observe(seconds);
  }
}
