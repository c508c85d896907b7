import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { InjectModel } from '@nestjs/mongoose';
import type { AnyBulkWriteOperation, Model } from 'mongoose';
import { toObjectId } from '../../database/object-id.js';
import { LANE_FREE, type ClaimedLane } from '../../lanes/lane.schema.js';
import { LaneStore, markDueUpdate } from '../../lanes/lane-store.js';
import { LaneWorker, type LaneTurn } from '../../lanes/lane-worker.js';
import { retryDelayMs } from '../../lanes/retry-schedule.js';
import type { AnyDomainEvent, DomainEventName } from '../domain-events.js';
import { EventLogRepository } from '../event-log.repository.js';
import { contextOfTraceParent, tracer } from '../../tracing/trace-context.js';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { CONSUMES_EVENTS, type EventConsumerOptions, type EventHandler } from './consumes-events.decorator.js';
import { EventConsumerLane } from './event-consumer-lane.schema.js';

/**
 * A durable consumer of the event log (webhook fan-out, inbound flows, auto-assignment, an extension's own):
 * it reads each company's events in log order from a position kept in MongoDB, one worker at a time per
 * company, with retries. Declared with `@ConsumesEvents` on a provider, or registered with `register`.
 */
export type EventConsumer = EventConsumerOptions & EventHandler;

/** Lane kind of the consumers in the LaneWorker. */
export const EVENT_CONSUMER = 'event-consumer';
const DEFAULT_BATCH_SIZE = 100;
/** A batch is bounded by its size; a minute leaves room for the slowest (ten flow runs of fifty steps). */
const LEASE_MS = 60_000;
const MAX_IN_FLIGHT = 8;
/** Failed turns in a row on one event before it is skipped (logged as an error), so it cannot stop the company's log. */
export const MAX_CONSUMER_FAILURES = 10;
const DEFAULT_RETRY_BACKOFF_MS = 500;

type ConsumerLane = ClaimedLane<EventConsumerLane> & { companyId: NonNullable<ClaimedLane<EventConsumerLane>['companyId']> };

@Injectable()
export class EventConsumers implements OnModuleInit {
  private readonly logger = new Logger(EventConsumers.name);
  private readonly consumers = new Map<string, EventConsumer>();
  private readonly store: LaneStore<EventConsumerLane>;

  constructor(
    @InjectModel(EventConsumerLane.name) private readonly model: Model<EventConsumerLane>,
    private readonly log: EventLogRepository,
    private readonly worker: LaneWorker,
    private readonly discovery: DiscoveryService,
  ) {
    // Only the consumers this process runs: in a rolling deploy, a process without a new consumer leaves its lanes be.
    this.store = new LaneStore(model, { eligible: () => ({ consumer: { $in: [...this.consumers.keys()] } }) });
  }

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const options = wrapper.metatype && (Reflect.getMetadata(CONSUMES_EVENTS, wrapper.metatype) as EventConsumerOptions | undefined);
      const handler = wrapper.instance as EventHandler | undefined;
      if (options && handler) this.register({ ...options, handle: (companyId, events) => handler.handle(companyId, events) });
    }
    this.worker.register({
      name: EVENT_CONSUMER,
      store: this.store,
      leaseMs: LEASE_MS,
      maxInFlight: MAX_IN_FLIGHT,
      backlogLabel: 'consumer',
      run: (lane, turn) => this.turn(lane as ConsumerLane, turn),
    });
  }

  /** Adds a consumer not declared with `@ConsumesEvents` (at run time: it reads the events logged from then on). */
  register(consumer: EventConsumer): void {
    if (this.consumers.has(consumer.name)) throw new Error(`Event consumer ${consumer.name} is registered twice`);
    this.consumers.set(consumer.name, consumer);
  }

  /**
   * Tells the consumers reading any of `types` that the company's log reaches `head` (the relay calls it after
   * appending, before clearing the events' markers). A consumer new to the company starts at `from`.
   */
  async markLogged(companyId: string, types: ReadonlySet<DomainEventName>, from: number, head: number): Promise<void> {
    const interested = [...this.consumers.values()].filter((consumer) => consumer.types.some((type) => types.has(type)));
    if (interested.length === 0) return;
    const now = new Date();
    await this.model.bulkWrite(
      interested.map((consumer) => this.dueOperation(consumer.name, companyId, now, { $max: { head } }, from - 1)),
      { ordered: false },
    );
    this.worker.wake(EVENT_CONSUMER);
  }

  /** Calls the consumer for the company soon, with no new events (e.g. auto-assignment when an agent comes online). */
  async nudge(consumer: string, companyId: string): Promise<void> {
    await this.model.bulkWrite([this.dueOperation(consumer, companyId, new Date(), { $inc: { nudges: 1 } }, null)]);
    this.worker.wake(EVENT_CONSUMER);
  }

  private dueOperation(
    consumer: string,
    companyId: string,
    now: Date,
    update: Record<string, unknown>,
    startPosition: number | null,
  ): AnyBulkWriteOperation<EventConsumerLane> {
    const company = toObjectId(companyId);
    const start = startPosition ?? 0;
    const due = markDueUpdate<EventConsumerLane>(now);
    return {
      updateOne: {
        filter: { _id: `${consumer}:${companyId}`, companyId: company },
        update: {
          ...due,
          ...update,
          $inc: { ...due.$inc, ...(update.$inc as object | undefined) },
          $setOnInsert: {
            consumer,
            position: start,
            ...(startPosition === null ? { head: start } : {}),
            failures: 0,
            lastError: null,
            leaseOwner: null,
            leaseUntil: LANE_FREE,
          },
        },
        upsert: true,
      },
    } as AnyBulkWriteOperation<EventConsumerLane>;
  }

  /** One batch of one company's events for one consumer; the position moves only past what was handled. */
  private async turn(lane: ConsumerLane, turn: LaneTurn): Promise<void> {
    const consumer = this.consumers.get(lane.consumer)!;
    const companyId = lane.companyId.toHexString();
    const batchSize = lane.failures > 0 ? 1 : (consumer.batchSize ?? DEFAULT_BATCH_SIZE);
    const events = await this.log.range(companyId, { after: lane.position, until: lane.head, types: consumer.types }, batchSize);
    const nudges = lane.nudges ?? 0;
    try {
      await this.traced(consumer.name, events, () => consumer.handle(companyId, events));
      if (nudges > 0 && events.length > 0) await this.traced(consumer.name, [], () => consumer.handle(companyId, []));
    } catch (error) {
      return this.failed(lane, turn, consumer, events, error);
    }
    // Only the nudges this turn answered: one landing meanwhile stays owed, and its mark keeps the lane due.
    if (nudges > 0) await this.model.updateOne({ _id: lane._id, companyId: lane.companyId }, { $inc: { nudges: -nudges } });
    const position = events.length === batchSize ? events[events.length - 1].sequence : Math.max(lane.head, lane.position);
    await turn.release(position < lane.head ? new Date() : undefined, { position, failures: 0 });
  }

  /**
   * Runs a consumer's batch in a span that continues the trace of the request behind its first event (linked to the
   * others'): what the batch stages (a flow's messages, deliveries) carries that trace on. No-op with tracing off.
   */
  private traced<T>(consumer: string, events: AnyDomainEvent[], handle: () => Promise<T>): Promise<T> {
    const traced = events.filter((event) => event.trace !== undefined);
    if (traced.length === 0) return handle();
    const links = traced.slice(1).flatMap((event) => {
      const linked = trace.getSpanContext(contextOfTraceParent(event.trace));
      return linked ? [{ context: linked }] : [];
    });
    const span = tracer.startSpan(
      `consume ${consumer}`,
      { links, attributes: { 'parley.consumer': consumer, 'parley.events': events.length } },
      contextOfTraceParent(traced[0].trace),
    );
    return context.with(trace.setSpan(context.active(), span), handle).then(
      (result) => {
        span.end();
        return result;
      },
      (error: unknown) => {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
        throw error;
      },
    );
  }

  private async failed(lane: ConsumerLane, turn: LaneTurn, consumer: EventConsumer, events: AnyDomainEvent[], error: unknown): Promise<void> {
    const message = failureText(error);
    const failures = lane.failures + 1;
    const failing = events[0];
    if (failing && failures >= MAX_CONSUMER_FAILURES) {
      this.logger.error({ err: error }, `Consumer ${consumer.name} skips event ${failing.id} after ${failures} failures`);
      const skipped = `skipped ${failing.id} after ${failures} failures: ${message}`;
      return turn.release(new Date(), { position: failing.sequence, failures: 0, lastError: skipped });
    }
    this.logger.warn({ err: error }, `Consumer ${consumer.name} failed (attempt ${failures}); it will retry`);
    const retryAt = new Date(Date.now() + retryDelayMs(failures, consumer.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS));
    await turn.release(retryAt, { failures, lastError: message });
  }
}

/** What a failed turn says; a batch handled conversation by conversation (p-map) fails with each failure's message. */
function failureText(error: unknown): string {
  if (error instanceof AggregateError) return [...new Set(error.errors.map(failureText))].join('; ');
  return error instanceof Error ? error.message : String(error);
}
