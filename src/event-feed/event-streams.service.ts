import { HttpException, HttpStatus, Injectable, Logger, ServiceUnavailableException, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Response } from 'express';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppConfig } from '../config/app-config.js';
import type { ChannelScope } from '../events/event-channel.js';
import { Metrics } from '../metrics/metrics.js';
import { LaneWorker } from '../lanes/lane-worker.js';
import { POLL_INTERVAL_MS } from '../lanes/poll-interval.js';
import type { WebhookEventName } from '../webhooks/webhook-events.js';
import { eventTypesOf, EventFeed } from './event-feed.service.js';
import { streamFilter } from './event-frames.js';
import { EventStream, type CredentialCheck, type StreamLimits } from './event-stream.js';
import { EventStreamSlotsRepository } from './event-stream-slots.repository.js';
import { EventTailer } from './event-tailer.js';
import type { EventNaming } from './event.view.js';

/** A stream's slot lapses this long after its process last renewed it (a process killed without closing its streams). */
const SLOT_LEASE_MS = 15_000;
const SLOT_RENEW_MS = 5_000;
/** On shutdown, how long ended streams may take to flush before their connections are cut. */
const SHUTDOWN_FLUSH_MS = 2_000;
/** The Retry-After of a 429 for one stream too many: a hint, since slots free up when streams close. */
const CAP_RETRY_AFTER_SECONDS = 10;

export interface StreamRequest {
  companyId: string;
  /** Who opens it, `agent:<id>` or `key:<id>`: each holds at most EVENT_STREAMS_PER_PRINCIPAL streams. */
  principal: string;
  naming: EventNaming;
  types?: WebhookEventName[];
  /** `Last-Event-ID`, else the `after` query parameter; neither: the stream starts with events from now on. */
  cursor?: string;
  /** Only events of conversations on these channels (a channel-scoped key's stream). */
  channels?: ChannelScope;
  /** The request's credential, checked again every EVENT_STREAM_AUTH_CHECK_MS while the stream is open. */
  credential: CredentialCheck;
}

/** What a credential check that no longer holds rejects with: the 401 or 403 a new request would answer. */
function refusalStatus(error: unknown): number | null {
  if (!(error instanceof HttpException)) return null;
  const status = error.getStatus();
  return status === HttpStatus.UNAUTHORIZED || status === HttpStatus.FORBIDDEN ? status : null;
}

/**
 * Opens and closes the event streams of this process. While a stream is open, on each poll of the process's
 * scheduler (LaneWorker.onPoll, every 250 ms) it looks in the log for other processes' appends (EventTailer.poll:
 * one query; new events reach streams within 1 s), writes keep-alives to the streams that have been quiet,
 * renews the streams' slots, and checks again the credential of each stream whose check is due (every
 * EVENT_STREAM_AUTH_CHECK_MS, 5 s at most): a stream whose API key was revoked, expired or lost its scope, or
 * whose token expired or was ended (its agent deactivated, given another role or password), ends with a last
 * comment saying so, and its reconnection gets the 401 or 403 (contract section 18). It stops listening when
 * the last stream closes and on shutdown, which ends every stream cleanly before the server closes.
 */
@Injectable()
export class EventStreams implements BeforeApplicationShutdown {
  private readonly logger = new Logger(EventStreams.name);
  private readonly limits: StreamLimits;
  private readonly credentialCheckMs: number;
  private readonly releasing = new Set<Promise<void>>();
  private stopListening?: () => void;
  private renewAt = 0;
  private closing = false;

  constructor(
    private readonly config: AppConfig,
    private readonly feed: EventFeed,
    private readonly tailer: EventTailer,
    private readonly slots: EventStreamSlotsRepository,
    private readonly worker: LaneWorker,
    metrics: Metrics,
  ) {
    metrics.countOpenStreams(() => this.tailer.openStreams);
    this.limits = { keepAliveMs: config.eventStreamKeepAliveMs, maxBufferBytes: config.eventStreamMaxBufferBytes };
    this.credentialCheckMs = config.eventStreamAuthCheckMs;
  }

  /**
   * Checks the request (400, 410, 429: thrown before anything is written, so they answer in the interface's
   * error shape), then sends the headers and keeps the response open as the stream.
   */
  async open(request: StreamRequest, res: Response): Promise<void> {
    this.refuseWhileClosing();
    const { companyId } = request;
    const { after, logged } = await this.feed.start(companyId, request.cursor);
    const id = `str_${randomBytes(12).toString('base64url')}`;
    const caps = { company: this.config.eventStreamsPerCompany, principal: this.config.eventStreamsPerPrincipal };
    const refused = await this.slots.take(companyId, { id, owner: this.worker.id, principal: request.principal }, SLOT_LEASE_MS, caps);
    if (refused) {
      res.setHeader('Retry-After', String(CAP_RETRY_AFTER_SECONDS));
      const whose = refused === 'company' ? 'a company' : 'one agent or API key';
      throw new HttpException(`At most ${caps[refused]} event streams may be open at once for ${whose}: close one, or retry later`, HttpStatus.TOO_MANY_REQUESTS);
    }
    if (this.closing || !res.socket || res.socket.destroyed) {
      this.release(companyId, id);
      this.refuseWhileClosing();
      return;
    }
    const filter = streamFilter(request.naming, eventTypesOf(request.types), request.channels);
    const stream = new EventStream(id, companyId, filter, after ?? logged, res, this.limits, request.credential, this.credentialCheckMs);
    stream.open((closed) => this.closed(closed));
    this.tailer.attach(stream, logged);
    this.listen();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.closing = true;
    this.stopListeningToPolls();
    const streams = [...this.tailer.streams()];
    for (const stream of streams) stream.end();
    // A client that stopped reading cannot take the end of its stream: cut it after a short wait.
    await Promise.race([Promise.all(streams.map((stream) => stream.ended)), sleep(SHUTDOWN_FLUSH_MS, undefined, { ref: false })]);
    for (const stream of streams) if (!stream.closed) stream.destroy();
    await Promise.allSettled([...this.releasing]);
  }

  private refuseWhileClosing(): void {
    if (this.closing) throw new ServiceUnavailableException('The server is shutting down: connect again');
  }

  private closed(stream: EventStream): void {
    this.tailer.detach(stream);
    this.release(stream.companyId, stream.id);
    if (this.tailer.openStreams === 0) this.stopListeningToPolls();
  }

  private release(companyId: string, id: string): void {
    const released = this.slots
      .release(companyId, [id])
      .catch((error: unknown) => this.logger.warn({ err: error }, `Could not free the slot of event stream ${id}; its lease lapses`))
      .finally(() => this.releasing.delete(released));
    this.releasing.add(released);
  }

  private tick(): void {
    const now = Date.now();
    this.tailer.poll().catch((error: unknown) => this.logger.warn({ err: error }, 'Could not poll the event log for the open streams'));
    for (const stream of this.tailer.streams()) {
      stream.keepAlive(now, POLL_INTERVAL_MS);
      if (!stream.checkingCredential && now >= stream.credentialDueAt) this.checkCredential(stream);
    }
    if (now >= this.renewAt) {
      this.renewAt = now + SLOT_RENEW_MS;
      this.renewSlots().catch((error: unknown) => this.logger.warn({ err: error }, 'Could not renew the slots of the open event streams'));
    }
  }

  /**
   * Ends the stream when its credential no longer holds. A check that fails otherwise (the database unreachable)
   * keeps the stream and is tried again at the next interval, as a request would be retried.
   */
  private checkCredential(stream: EventStream): void {
    stream.checkingCredential = true;
    stream
      .credential()
      .catch((error: unknown) => {
        const status = refusalStatus(error);
        if (status !== null) stream.endRefused(status);
        else this.logger.warn({ err: error }, `Could not check the credential of event stream ${stream.id}; trying again`);
      })
      .finally(() => {
        stream.checkingCredential = false;
        stream.credentialDueAt = Date.now() + this.credentialCheckMs;
      });
  }

  private async renewSlots(): Promise<void> {
    const byCompany = new Map<string, string[]>();
    for (const stream of this.tailer.streams()) {
      const ids = byCompany.get(stream.companyId) ?? [];
      ids.push(stream.id);
      byCompany.set(stream.companyId, ids);
    }
    await Promise.all([...byCompany].map(([companyId, ids]) => this.slots.renew(companyId, ids, SLOT_LEASE_MS)));
  }

  private listen(): void {
    if (this.stopListening) return;
    this.renewAt = Date.now() + SLOT_RENEW_MS;
    this.stopListening = this.worker.onPoll(() => this.tick());
  }

  private stopListeningToPolls(): void {
    this.stopListening?.();
    this.stopListening = undefined;
  }
}
