import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Types } from 'mongoose';
import { AppConfig } from '../config/app-config.js';
import { LaneWorker } from '../lanes/lane-worker.js';
import { Metrics } from '../metrics/metrics.js';
import { EventConsumers } from './consumers/event-consumers.js';
import type { AnyDomainEvent } from './domain-events.js';
import { channelOfData } from './event-channel.js';
import { EventLogHeadsRepository, EventLogRepository, toDomainEvent, type Reservation } from './event-log.repository.js';
import type { LoggedEvent } from './event-log.schema.js';
import type { PendingEvent } from './pending-event.schema.js';
import { BoundedMap } from '../common/bounded-map.js';

/** Emitted in this process for every batch appended to the log (after its consumers were told). */
export const EVENTS_LOGGED = 'events.logged';
export interface EventsLogged {
  companyId: string;
  events: AnyDomainEvent[];
}

/** A collection whose documents carry pending events (EventSourceRepository). */
export interface EventSourceStore {
  readonly sourceName: string;
  /** Removes these events from their documents' pending events: they are in the log. */
  clearPending(companyId: string, documents: { docId: Types.ObjectId; ids: string[] }[]): Promise<void>;
  /** Documents with an event pending since `before` or earlier, across companies (the sweep). */
  findStalePending(before: Date, limit: number): Promise<{ companyId: string; docId: Types.ObjectId; events: PendingEvent[] }[]>;
}

/** Events to log, and the document that carries them as pending (none for events published without a change). */
export interface RelayItem {
  source: EventSourceStore | null;
  docId: Types.ObjectId | null;
  events: PendingEvent[];
}

interface Queued extends RelayItem {
  done: { resolve: () => void; reject: (error: unknown) => void };
}

/** The events of one append; a burst is split so that one write stays small. */
const MAX_BATCH_EVENTS = 500;
/** How long a head lease lasts: the append of one batch takes milliseconds. */
const HEAD_LEASE_MS = 10_000;
/** How long to wait for another process's head lease before leaving the events to the sweep. */
const HEAD_WAIT_MS = 15_000;
/** Ids of events this process logged lately, remembered so that a document's events handed over again are not. */
const RECENTLY_LOGGED = 10_000;

/**
 * Moves events from the documents that carry them into the log. A change is stored with its events (pending),
 * then handed here without waiting: per company, batches are appended in order under the company's head lease
 * (sequence numbers reserved in the same write), the consumers reading them are told, the lease is released,
 * and only then are the events cleared from their documents. A process that dies anywhere in between leaves the
 * events pending; the sweep (PendingEventSweep) relays them again, and the log refuses what it already holds.
 */
@Injectable()
export class EventRelay implements BeforeApplicationShutdown {
  private readonly logger = new Logger(EventRelay.name);
  private readonly queues = new Map<string, { items: Queued[]; draining: Promise<void> | null }>();
  private readonly sources = new Map<string, EventSourceStore>();
  /** In insertion order, the oldest forgotten first: ids this process appended to the log (they stay there). */
  private readonly recentlyLogged = new BoundedMap<string, true>(RECENTLY_LOGGED);
  private readonly retentionMs: number;
  private stopping = false;

  constructor(
    config: AppConfig,
    private readonly log: EventLogRepository,
    private readonly heads: EventLogHeadsRepository,
    private readonly consumers: EventConsumers,
    private readonly worker: LaneWorker,
    private readonly emitter: EventEmitter2,
    private readonly metrics: Metrics,
  ) {
    this.retentionMs = config.eventRetentionDays * 86_400_000;
  }

  registerSource(source: EventSourceStore): void {
    this.sources.set(source.sourceName, source);
  }

  get registeredSources(): EventSourceStore[] {
    return [...this.sources.values()];
  }

  /** Relays in the background: a failure leaves the events pending, for the sweep. */
  enqueue(companyId: string, item: RelayItem): void {
    this.relay(companyId, [item]).catch((error: unknown) =>
      this.logger.warn({ err: error }, `Events of company ${companyId} left for the sweep`),
    );
  }

  /** Resolves once `items` are in the log (appended now, or found there already). */
  relay(companyId: string, items: RelayItem[]): Promise<void> {
    const queue = this.queues.get(companyId) ?? { items: [], draining: null };
    this.queues.set(companyId, queue);
    const done = Promise.all(
      items.map((item) => new Promise<void>((resolve, reject) => queue.items.push({ ...item, done: { resolve, reject } }))),
    );
    queue.draining ??= this.drain(companyId, queue);
    return done.then(() => undefined);
  }

  /** Resolves once everything handed to the relay in this process so far is logged (or left for the sweep). */
  async idle(): Promise<void> {
    while (this.queues.size > 0) await Promise.allSettled([...this.queues.values()].flatMap((queue) => queue.draining ?? []));
  }

  /** False once shutdown began: what is queued is still logged, but the process is no longer ready (readiness). */
  get isRunning(): boolean {
    return !this.stopping;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    await this.idle();
  }

  private async drain(companyId: string, queue: { items: Queued[]; draining: Promise<void> | null }): Promise<void> {
    try {
      while (queue.items.length > 0) {
        const batch = takeBatch(queue.items);
        try {
          await this.append(companyId, batch);
          batch.forEach((item) => item.done.resolve());
        } catch (error) {
          batch.forEach((item) => item.done.reject(error));
        }
      }
    } finally {
      this.queues.delete(companyId);
    }
  }

  private async append(companyId: string, batch: Queued[]): Promise<void> {
    // A write that finds a document's events still pending hands them over again; those this process has logged
    // meanwhile only need their markers cleared (appending them again would waste a sequence number each).
    const events = uniqueById(batch.flatMap((item) => item.events)).filter((event) => !this.recentlyLogged.has(event.id));
    if (events.length === 0) return this.clearMarkers(companyId, batch);
    const reservation = await this.reserve(companyId, events.length);
    const loggedAt = new Date();
    const entries: LoggedEvent[] = events.map((event, index) => ({
      _id: event.id,
      type: event.type,
      sequence: reservation.first + index,
      occurredAt: event.occurredAt,
      loggedAt,
      channel: event.channel !== undefined ? event.channel : channelOfData(event.data),
      data: event.data,
      ...(event.trace ? { trace: event.trace } : {}),
      expireAt: new Date(event.occurredAt.getTime() + this.retentionMs),
    }));
    let appended: LoggedEvent[];
    try {
      appended = await this.log.append(companyId, entries);
      await this.consumers.markLogged(companyId, new Set(entries.map((entry) => entry.type)), reservation.first, reservation.last);
    } catch (error) {
      await this.heads.release(companyId, this.worker.id, 0);
      throw error;
    }
    await this.heads.release(companyId, this.worker.id, reservation.last);
    this.remember(entries);
    for (const entry of entries) this.metrics.observeRelayLag((loggedAt.getTime() - entry.occurredAt.getTime()) / 1000);
    // Readers in this process (the feed) hear of the batch as soon as it is readable; clearing the markers can follow.
    const logged: EventsLogged = { companyId, events: appended.map((entry) => toDomainEvent(entry, companyId)) };
    this.emitter.emit(EVENTS_LOGGED, logged);
    await this.clearMarkers(companyId, batch);
  }

  private remember(entries: LoggedEvent[]): void {
    for (const entry of entries) this.recentlyLogged.set(entry._id, true);
  }

  private async reserve(companyId: string, count: number): Promise<Reservation> {
    const deadline = Date.now() + HEAD_WAIT_MS;
    for (;;) {
      const reservation = await this.heads.reserve(companyId, count, this.worker.id, HEAD_LEASE_MS);
      if (reservation) return reservation;
      if (Date.now() > deadline) throw new Error(`The event log head of company ${companyId} stayed leased for ${HEAD_WAIT_MS} ms`);
      await sleep(2 + Math.random() * 10);
    }
  }

  private async clearMarkers(companyId: string, batch: Queued[]): Promise<void> {
    const bySource = new Map<EventSourceStore, { docId: Types.ObjectId; ids: string[] }[]>();
    for (const item of batch) {
      if (!item.source || !item.docId) continue;
      const documents = bySource.get(item.source) ?? [];
      documents.push({ docId: item.docId, ids: item.events.map((event) => event.id) });
      bySource.set(item.source, documents);
    }
    await Promise.all([...bySource].map(([source, documents]) => source.clearPending(companyId, documents)));
  }
}

/** Items from the front of the queue, up to MAX_BATCH_EVENTS events (at least one item). */
function takeBatch(items: Queued[]): Queued[] {
  let count = 0;
  let taken = 0;
  while (taken < items.length && (taken === 0 || count + items[taken].events.length <= MAX_BATCH_EVENTS)) {
    count += items[taken].events.length;
    taken += 1;
  }
  return items.splice(0, taken);
}

function uniqueById(events: PendingEvent[]): PendingEvent[] {
  const seen = new Set<string>();
  return events.filter((event) => !seen.has(event.id) && seen.add(event.id));
}

