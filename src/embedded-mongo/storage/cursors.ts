/**
 * Server-side cursors. A find or aggregate computes its full result list (references to immutable stored
 * documents, or fresh aggregation output) up front; the cursor hands it out in batches. Cursor ids are int64
 * (BSON Long) as the driver expects; idle cursors are dropped after ten minutes, like MongoDB's default.
 */
import { calculateObjectSize, Long, type Document } from 'bson';
import { MAX_BSON_SIZE } from '../wire-protocol.js';

export const DEFAULT_FIRST_BATCH = 101;
export const CURSOR_IDLE_MS = 10 * 60_000;

/** Turns stored documents into what the client receives (projection); null when they go out as they are. */
export type BatchTransform = ((docs: Document[]) => Document[]) | null;

interface CursorState {
  ns: string;
  docs: Document[];
  pos: number;
  transform: BatchTransform;
  lastUsed: number;
}

export interface Batch {
  docs: Document[];
  /** Long 0 when exhausted. */
  cursorId: Long;
}

export class CursorStore {
  private readonly cursors = new Map<string, CursorState>();
  private nextId = 1 + Math.floor(Math.random() * 2 ** 40);

  /**
   * Takes the first batch from a result list; registers a cursor for the rest unless everything fitted or the
   * client asked for a single batch.
   */
  open(ns: string, docs: Document[], batchSize: number | undefined, transform: BatchTransform, singleBatch = false): Batch {
    const state: CursorState = { ns, docs, pos: 0, transform, lastUsed: Date.now() };
    const first = this.take(state, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch || state.pos >= docs.length) return { docs: first, cursorId: Long.ZERO };
    const id = Long.fromNumber(this.nextId++);
    this.cursors.set(id.toString(), state);
    return { docs: first, cursorId: id };
  }

  /** The next batch of cursor `id` in namespace `ns`, or undefined when no such cursor is open. */
  more(id: Long, ns: string, batchSize: number | undefined): Batch | undefined {
    const key = id.toString();
    const state = this.cursors.get(key);
    if (!state || state.ns !== ns) return undefined;
    state.lastUsed = Date.now();
    const docs = this.take(state, batchSize || Infinity);
    if (state.pos >= state.docs.length) {
      this.cursors.delete(key);
      return { docs, cursorId: Long.ZERO };
    }
    return { docs, cursorId: id };
  }

  kill(id: Long): boolean {
    return this.cursors.delete(id.toString());
  }

  expireIdle(now: number): void {
    for (const [key, state] of this.cursors) if (now - state.lastUsed > CURSOR_IDLE_MS) this.cursors.delete(key);
  }

  clear(): void {
    this.cursors.clear();
  }

  /** Up to `max` documents, fewer if the batch would exceed the 16 MiB a reply may carry (at least one). */
  private take(state: CursorState, max: number): Document[] {
    const end = Math.min(state.docs.length, state.pos + max);
    let batch = state.docs.slice(state.pos, end);
    if (state.transform) batch = state.transform(batch);
    let bytes = 0;
    let n = 0;
    for (; n < batch.length; n++) {
      bytes += calculateObjectSize(batch[n], { ignoreUndefined: true });
      if (n > 0 && bytes > MAX_BSON_SIZE) break;
    }
    state.pos += n;
    return n === batch.length ? batch : batch.slice(0, n);
  }
}
