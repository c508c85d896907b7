import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { AnyDomainEvent } from '../events/domain-events.js';
import { EventLogHeadsRepository, EventLogRepository } from '../events/event-log.repository.js';
import { EVENTS_LOGGED, type EventsLogged } from '../events/event-relay.js';
import { companyTag } from './event-cursor.js';
import { FrameBatch } from './event-frames.js';
import type { EventStream } from './event-stream.js';

/** Events read at once when a company's fan-out has fallen behind its log (a relay appends at most 500). */
const FAN_OUT_PAGE = 500;
/** Events per read while one stream catches up (each page waits for the client to take the previous one). */
const CATCH_UP_PAGE = 100;

/** The open streams of one company in this process, and how far its log has been fanned out to them. */
interface Channel {
  companyId: string;
  tag: string;
  streams: Set<EventStream>;
  /** Every event up to here has been handed to the live streams. */
  position: number;
  /** How far the log is known to be complete (up to its `logged`), so how far `sync` reads. */
  target: number;
  syncing: Promise<void> | null;
}

/**
 * The process's one change feed of the event log, fanned out to the event streams open in it: no database
 * work per stream once a stream is live. A batch this process appends arrives at once (EVENTS_LOGGED) and is
 * handed out as it is when it continues what the company's streams have had; anything else (another
 * process's appends, a batch after a gap) is read from the log, up to the company's `logged` only, so an
 * event still being appended elsewhere is never stepped over. Other processes' appends are found by `poll`:
 * one query for every company with an open stream here, called by EventStreams' clock.
 */
@Injectable()
export class EventTailer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(EventTailer.name);
  private readonly channels = new Map<string, Channel>();
  private polling: Promise<void> | null = null;
  private readonly onLogged = (batch: EventsLogged) => {
    // Called inside the relay's emit: a failure here must not reach the relay.
    try {
      this.logged(batch);
    } catch (error) {
      this.logger.error({ err: error }, `Event streams of company ${batch.companyId} missed a batch; the next poll reads it`);
    }
  };

  constructor(
    private readonly log: EventLogRepository,
    private readonly heads: EventLogHeadsRepository,
    private readonly emitter: EventEmitter2,
  ) {}

  onModuleInit(): void {
    this.emitter.on(EVENTS_LOGGED, this.onLogged);
  }

  onModuleDestroy(): void {
    this.emitter.off(EVENTS_LOGGED, this.onLogged);
  }

  get openStreams(): number {
    let count = 0;
    for (const channel of this.channels.values()) count += channel.streams.size;
    return count;
  }

  *streams(): Iterable<EventStream> {
    for (const channel of this.channels.values()) yield* channel.streams;
  }

  /** Adds an opened stream: it catches up from its position, then goes live. `logged` is its company's, just read. */
  attach(stream: EventStream, logged: number): void {
    let channel = this.channels.get(stream.companyId);
    if (!channel) {
      channel = { companyId: stream.companyId, tag: companyTag(stream.companyId), streams: new Set(), position: logged, target: logged, syncing: null };
      this.channels.set(stream.companyId, channel);
    }
    channel.streams.add(stream);
    this.sync(channel, logged);
    this.catchUp(channel, stream).catch((error: unknown) => {
      this.logger.warn({ err: error }, `Event stream ${stream.id} could not catch up; its client resumes when it reconnects`);
      stream.destroy();
    });
  }

  detach(stream: EventStream): void {
    const channel = this.channels.get(stream.companyId);
    if (!channel?.streams.delete(stream)) return;
    if (channel.streams.size === 0) this.channels.delete(stream.companyId);
  }

  /** Reads the heads of every company with an open stream here (one query) and fans out what is new. */
  poll(): Promise<void> {
    this.polling ??= this.readHeads().finally(() => {
      this.polling = null;
    });
    return this.polling;
  }

  private async readHeads(): Promise<void> {
    if (this.channels.size === 0) return;
    const logged = await this.heads.loggedOf([...this.channels.keys()]);
    for (const [companyId, head] of logged) {
      const channel = this.channels.get(companyId);
      if (channel && head > channel.position) this.sync(channel, head);
    }
  }

  private logged({ companyId, events }: EventsLogged): void {
    const channel = this.channels.get(companyId);
    if (!channel || events.length === 0) return;
    const last = events[events.length - 1].sequence;
    if (last <= channel.position) return;
    // A batch holds every event of the sequence numbers it spans (a republished duplicate's number holds
    // none), so it continues the fan-out exactly when it starts at or before the next number.
    if (!channel.syncing && events[0].sequence <= channel.position + 1) {
      this.fanOut(channel, events, last);
    } else {
      this.sync(channel, last);
    }
  }

  /** Reads the log up to `target` (a sequence at or below the company's `logged`) and fans it out, one run at a time. */
  private sync(channel: Channel, target: number): void {
    channel.target = Math.max(channel.target, target);
    if (channel.syncing || channel.position >= channel.target) return;
    channel.syncing = this.readUpToTarget(channel)
      .catch((error: unknown) => this.logger.warn({ err: error }, `Could not read the event log of company ${channel.companyId}; the next poll tries again`))
      .finally(() => {
        channel.syncing = null;
      });
  }

  private async readUpToTarget(channel: Channel): Promise<void> {
    while (channel.position < channel.target && channel.streams.size > 0) {
      const target = channel.target;
      const events = await this.log.range(channel.companyId, { after: channel.position, until: target }, FAN_OUT_PAGE);
      this.fanOut(channel, events, events.length === FAN_OUT_PAGE ? events[events.length - 1].sequence : target);
    }
  }

  /** Hands the events after the fan-out's position, up to `reached`, to every live stream of the company. */
  private fanOut(channel: Channel, events: readonly AnyDomainEvent[], reached: number): void {
    const frames = new FrameBatch(events, channel.tag);
    const from = channel.position;
    for (const stream of channel.streams) {
      if (stream.live) stream.send(frames.for(stream.filter, Math.max(from, stream.sent)), reached);
    }
    channel.position = Math.max(channel.position, reached);
  }

  /** Writes a new stream the events between its position and the fan-out's, read from the log, then makes it live. */
  private async catchUp(channel: Channel, stream: EventStream): Promise<void> {
    for (;;) {
      if (stream.closed) return;
      const target = channel.position;
      if (stream.sent >= target) {
        stream.live = true;
        return;
      }
      const types = stream.filter.types ? [...stream.filter.types] : undefined;
      const channels = stream.filter.channels ?? undefined;
      const events = await this.log.range(channel.companyId, { after: stream.sent, until: target, types, channels }, CATCH_UP_PAGE);
      const reached = events.length === CATCH_UP_PAGE ? events[events.length - 1].sequence : target;
      stream.send(new FrameBatch(events, channel.tag).for(stream.filter, stream.sent), reached);
      await stream.drained();
    }
  }
}
