import { Logger } from '@nestjs/common';
import type { Response } from 'express';
import { credentialEndFrame, KEEP_ALIVE_FRAME, type StreamFilter } from './event-frames.js';

export interface StreamLimits {
  keepAliveMs: number;
  /** Unread bytes a live stream may hold before it is disconnected. */
  maxBufferBytes: number;
}

/** Checks a stream's credential again: resolves while it holds, rejects with the 401 or 403 a new request with it would get. */
export type CredentialCheck = () => Promise<void>;

/**
 * A client that took nothing for this long (no byte left the socket: not an event, not a keep-alive) is taken
 * for gone. Two keep-alive intervals and some slack: a reading client is written to at least every interval.
 */
export function stallTimeoutMs(keepAliveMs: number): number {
  return 2 * keepAliveMs + 5_000;
}

/**
 * One open Server-Sent Events response. It first catches up from the log (EventTailer), paced by the client
 * (each page waits for the previous one to leave the process); then it is live, fed by its company's fan-out,
 * which cannot wait for one slow reader: a live stream that leaves more than `maxBufferBytes` unread is
 * disconnected, and its client resumes later with Last-Event-ID, losing nothing.
 */
export class EventStream {
  private static readonly logger = new Logger(EventStream.name);
  /** Every event this stream wants, up to this sequence of the company's log, has been written to it. */
  sent: number;
  live = false;
  closed = false;
  /** When its credential is next checked (EventStreams), and whether a check is running. */
  credentialDueAt: number;
  checkingCredential = false;
  private lastWriteAt = Date.now();
  private onEnd: () => void = () => undefined;
  /** Resolves when the response has closed, whichever side ended it. */
  readonly ended = new Promise<void>((resolve) => (this.onEnd = resolve));

  constructor(
    readonly id: string,
    readonly companyId: string,
    readonly filter: StreamFilter,
    start: number,
    private readonly res: Response,
    private readonly limits: StreamLimits,
    /** Its request's credential, checked again while the stream is open. */
    readonly credential: CredentialCheck,
    credentialCheckMs: number,
  ) {
    this.sent = start;
    this.credentialDueAt = Date.now() + credentialCheckMs;
  }

  /** Sends the headers at once (so the client knows the stream is open) and watches for its end. */
  open(onClose: (stream: EventStream) => void): void {
    const res = this.res;
    res.status(200);
    res.setHeader('content-type', 'text/event-stream; charset=utf-8');
    res.setHeader('cache-control', 'no-cache, no-transform');
    // nginx and its kind would otherwise buffer the stream; the connection is not reused after it.
    res.setHeader('x-accel-buffering', 'no');
    res.setHeader('connection', 'close');
    res.setTimeout(stallTimeoutMs(this.limits.keepAliveMs), () => this.drop('took nothing from the stream for too long'));
    res.once('close', () => {
      this.closed = true;
      this.onEnd();
      onClose(this);
    });
    res.flushHeaders();
  }

  /** Writes the frames of the log up to `reached` (`chunk` holds those this stream wants; it may be empty). */
  send(chunk: string, reached: number): void {
    if (this.closed) return;
    if (this.live && this.res.writableLength > this.limits.maxBufferBytes) {
      return this.drop(`left more than ${this.limits.maxBufferBytes} bytes unread`);
    }
    if (chunk) this.write(chunk);
    this.sent = Math.max(this.sent, reached);
  }

  /** A keep-alive comment when nothing was written for a keep-alive interval (`slackMs`: the caller's clock step). */
  keepAlive(now: number, slackMs: number): void {
    if (!this.closed && now - this.lastWriteAt + slackMs >= this.limits.keepAliveMs) this.write(KEEP_ALIVE_FRAME);
  }

  /** Resolves once what was written has left the process (or the stream closed). */
  drained(): Promise<void> {
    if (this.closed || !this.res.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve();
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }

  /** Ends the response cleanly: the client sees the stream end and reconnects (EventSource does by itself). */
  end(): void {
    if (!this.closed) this.res.end();
  }

  destroy(): void {
    this.res.destroy();
  }

  /** Ends the stream whose credential no longer holds, saying so in a last comment; the client's reconnection gets `status`. */
  endRefused(status: number): void {
    if (this.closed) return;
    EventStream.logger.log(`Event stream ${this.id} of company ${this.companyId} ended: its credential no longer holds (${status})`);
    this.write(credentialEndFrame(status));
    this.res.end();
  }

  drop(reason: string): void {
    if (this.closed) return;
    EventStream.logger.warn(`Event stream ${this.id} of company ${this.companyId} disconnected: the client ${reason}`);
    this.res.destroy();
  }

  private write(chunk: string): void {
    this.res.write(chunk);
    this.lastWriteAt = Date.now();
  }
}
