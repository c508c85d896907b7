/**
 * What one client may hold of the server: connections, bytes buffered per connection and across all of them, idle
 * time, and how long one command may keep the others waiting. A client over a limit gets a MongoDB-style error (or, past the connection limit, an error and a close) and
 * the others keep being served.
 */
import { DEFAULT_WORK_LIMITS } from './query/work.js';
import { MAX_MESSAGE_SIZE } from './wire-protocol.js';

export interface ServerLimits {
  /** Open connections; one more gets code 365 TemporarilyUnavailable on its first message and is closed. */
  maxConnections: number;
  /**
   * Bytes one connection may have buffered: its largest message (advertised as hello's `maxMessageSizeBytes`, so
   * drivers split batches to fit). A longer message is skipped unread and answered with 10334 BSONObjectTooLarge.
   */
  maxConnectionBufferBytes: number;
  /**
   * Bytes buffered across all connections (requests being received, replies not yet taken by their client). A
   * message that would go past it is skipped unread and answered with 146 ExceededMemoryLimit.
   */
  maxTotalBufferBytes: number;
  /** A connection with no traffic for this long is closed; 0 keeps idle connections forever. */
  idleTimeoutMs: number;
  /** Work one command does in one turn before other connections' commands run (query/work.ts). */
  sliceMs: number;
  /** How long one regex execution may run before it is abandoned (query/work.ts). */
  regexMs: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  maxConnections: 1000,
  maxConnectionBufferBytes: MAX_MESSAGE_SIZE,
  maxTotalBufferBytes: 128 * 1024 * 1024,
  idleTimeoutMs: 10 * 60_000,
  sliceMs: DEFAULT_WORK_LIMITS.sliceMs,
  regexMs: DEFAULT_WORK_LIMITS.regexMs,
};

/** Bytes counted against `maxTotalBufferBytes`, by every connection. */
export class BufferBudget {
  used = 0;

  constructor(readonly max: number) {}

  /**
   * Moves a holder's count from `from` to `to` bytes; false (and nothing changed) if the total would then be past
   * the limit, even when those bytes have arrived already (the caller then drops them).
   */
  tryCharge(from: number, to: number): boolean {
    if (this.used - from + to > this.max) return false;
    this.used += to - from;
    return true;
  }

  /** Counts bytes that are held already (pipelined input, a reply on its way out), whatever the limit. */
  charge(delta: number): void {
    this.used += delta;
  }
}
