import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model } from 'mongoose';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId } from '../database/tenancy/tenant-repository.js';
import { Metrics } from '../metrics/metrics.js';
import { Clock } from './clock.js';
import { DurableTimer } from './durable-timer.schema.js';
import { LANE_FREE, type ClaimedLane } from './lane.schema.js';
import { LaneStore } from './lane-store.js';
import { LaneWorker, type LaneTurn } from './lane-worker.js';
import { POLL_INTERVAL_MS } from './poll-interval.js';
import { retryDelayMs } from './retry-schedule.js';

/** Lane kind of the timers in the LaneWorker. */
export const DURABLE_TIMER = 'durable-timer';
/** A firing is a few writes; a lease this long is only ever reached by a process that died while firing. */
const LEASE_MS = 30_000;
/** Enough firings at once for a thousand deadlines falling due in the same minute. */
const MAX_IN_FLIGHT = 16;
export const MAX_TIMER_FAILURES = 10;
const RETRY_BACKOFF_MS = 1000;

/** A timer as its handler receives it. */
export interface FiredTimer<P = Record<string, unknown>> {
  /** `<kind>:<key>`: stable across retries, so an effect keyed by it is applied once. */
  id: string;
  kind: string;
  key: string;
  companyId: string;
  /** When it was due. */
  dueAt: Date;
  /** When it fired (Clock time): at or shortly after `dueAt`, later after a crash or a retry. */
  firedAt: Date;
  payload: P;
}

/**
 * Fires the timer. A timer may fire again after a crash, and may be set again or cancelled while it fires, so the
 * handler acts only if what it fires for still holds (e.g. a conditional update on the record, matching the due time
 * it was set for), which makes its effect happen once. Throwing retries it with backoff.
 */
export type TimerHandler<P = Record<string, unknown>> = (timer: FiredTimer<P>) => Promise<void>;

type TimerLane = ClaimedLane<DurableTimer> & { companyId: NonNullable<ClaimedLane<DurableTimer>['companyId']> };

/**
 * Every deadline of the product (a snooze's wake-up, an SLA's warning and breach, a reply window closing) is a
 * durable timer: a document due at a time, fired by whichever process's LaneWorker claims it first, within the
 * worker's poll of its due time, once. Nothing scans the records the deadlines belong to: a timer is set when its
 * deadline is decided, moved when it moves, and cancelled when it no longer applies. Modules register a handler per
 * kind when they initialise.
 */
@Injectable()
export class DurableTimers implements OnModuleInit {
  private readonly logger = new Logger(DurableTimers.name);
  private readonly handlers = new Map<string, TimerHandler<any>>();
  private readonly store: LaneStore<DurableTimer>;

  constructor(
    @InjectModel(DurableTimer.name) private readonly model: Model<DurableTimer>,
    private readonly worker: LaneWorker,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {
    // Only the kinds this process knows: in a rolling deploy, an older process leaves a newer kind's timers be.
    this.store = new LaneStore(model, { eligible: () => ({ kind: { $in: [...this.handlers.keys()] } }) });
  }

  /** Registers the handler of a kind of timer; call it when the module initialises. */
  register<P = Record<string, unknown>>(kind: string, handler: TimerHandler<P>): void {
    if (kind.includes(':')) throw new Error(`Timer kind ${kind} must not contain ':'`);
    if (this.handlers.has(kind)) throw new Error(`Timer kind ${kind} is registered twice`);
    this.handlers.set(kind, handler);
  }

  onModuleInit(): void {
    this.worker.register({
      name: DURABLE_TIMER,
      store: this.store,
      leaseMs: LEASE_MS,
      maxInFlight: MAX_IN_FLIGHT,
      backlogLabel: 'kind',
      run: (lane, turn) => this.fire(lane as TimerLane, turn),
    });
  }

  /** Sets the company's timer of `kind` and `key` to fire at `dueAt` with `payload`, replacing its earlier setting. */
  async set(companyId: CompanyId, kind: string, key: string, dueAt: Date, payload: Record<string, unknown> = {}): Promise<void> {
    await this.upsert(companyId, kind, key, dueAt, payload, '$set');
  }

  /**
   * Makes the timer due no later than `dueAt`: sets it when it is not set, moves it earlier when it is due later,
   * and leaves it when it is due sooner, in one atomic write. For a deadline that can only be moved safely one way
   * before the record it belongs to is written: set it here first, then write the record, and a crash in between
   * leaves a timer that fires early (its handler finds the deadline not due yet and sets it again) rather than late.
   * A firing under way when this is called fires again afterwards, so it cannot remove the timer from under it.
   */
  async setNoLaterThan(companyId: CompanyId, kind: string, key: string, dueAt: Date, payload: Record<string, unknown> = {}): Promise<void> {
    await this.upsert(companyId, kind, key, dueAt, payload, '$min');
  }

  /** Writes the timer with its due time set (`$set`) or moved only earlier (`$min`), and wakes the lanes if it is near. */
  private async upsert(companyId: CompanyId, kind: string, key: string, dueAt: Date, payload: Record<string, unknown>, due: '$set' | '$min'): Promise<void> {
    const dueFields = { dueAt, nextDueAt: dueAt };
    await this.model
      .updateOne(
        { _id: timerId(kind, key), companyId: toObjectId(String(companyId)) },
        {
          $set: { kind, payload, failures: 0, ...(due === '$set' ? dueFields : {}) },
          ...(due === '$min' ? { $min: dueFields } : {}),
          $inc: { queueVersion: 1 },
          $setOnInsert: { leaseOwner: null, leaseUntil: LANE_FREE },
        },
        { upsert: true },
      )
      .exec();
    if (dueAt.getTime() <= this.clock.now().getTime() + POLL_INTERVAL_MS) this.worker.wake(DURABLE_TIMER);
  }

  /**
   * Makes every timer of the company's `kind` due now, in one write: for a setting every such deadline depends on, so
   * that each fires and sets itself again against the new value (see ConversationRetention).
   */
  async dueAllNow(companyId: CompanyId, kind: string): Promise<void> {
    const dueAt = this.clock.now();
    await this.model
      .updateMany({ companyId: toObjectId(String(companyId)), kind }, { $set: { dueAt, nextDueAt: dueAt, failures: 0 }, $inc: { queueVersion: 1 } })
      .exec();
    this.worker.wake(DURABLE_TIMER);
  }

  /** Cancels the timer, whether or not it was set; a firing under way finishes, and must find nothing to do. */
  async cancel(companyId: CompanyId, kind: string, key: string): Promise<void> {
    await this.model.deleteOne({ _id: timerId(kind, key), companyId: toObjectId(String(companyId)) }).exec();
  }

  /** When the timer is due, or null when it is not set. */
  async dueAt(companyId: CompanyId, kind: string, key: string): Promise<Date | null> {
    const timer = await this.model
      .findOne({ _id: timerId(kind, key), companyId: toObjectId(String(companyId)) }, { dueAt: 1 })
      .lean()
      .exec();
    return timer?.dueAt ?? null;
  }

  private async fire(lane: TimerLane, turn: LaneTurn): Promise<void> {
    const handler = this.handlers.get(lane.kind)!;
    const id = String(lane._id);
    const firedAt = this.clock.now();
    try {
      await handler({
        id,
        kind: lane.kind,
        key: id.slice(lane.kind.length + 1),
        companyId: lane.companyId.toHexString(),
        dueAt: lane.dueAt,
        firedAt,
        payload: lane.payload ?? {},
      });
    } catch (error) {
      return this.failed(lane, turn, error);
    }
    this.metrics.observeTimerLateness(lane.kind, lane.dueAt, firedAt);
    // Set again while it fired: the new due time stands, and the lane keeps it.
    if (!(await this.store.remove(lane))) await turn.release(null);
  }

  private async failed(lane: TimerLane, turn: LaneTurn, error: unknown): Promise<void> {
    const failures = lane.failures + 1;
    if (failures >= MAX_TIMER_FAILURES) {
      this.logger.error({ err: error }, `Timer ${String(lane._id)} dropped after ${failures} failed firings`);
      if (!(await this.store.remove(lane))) await turn.release(null);
      return;
    }
    this.logger.warn({ err: error }, `Timer ${String(lane._id)} failed to fire (attempt ${failures}); it will retry`);
    await turn.release(new Date(this.clock.now().getTime() + retryDelayMs(failures, RETRY_BACKOFF_MS)), { failures });
  }
}

function timerId(kind: string, key: string): string {
  return `${kind}:${key}`;
}
