/**
 * Server-side cursors. A find or aggregate computes its full result list (references to immutable stored
 * documents, or fresh aggregation output) up front; the cursor hands it out in batches. Cursor ids are int64
 * (BSON Long) as the driver expects; idle cursors are dropped after ten minutes, like MongoDB's default.
 */
import { Long, type Document } from 'bson';
import { encodeBatch, type EncodedDocuments } from '../encoded-batch.js';
import type { Projector } from '../query/projection.js';
import { MongoCommandError } from '../errors.js';
import { compileFilter, type Matcher } from '../query/mingo.js';
import type { FindRequest } from '../query/planner.js';
import { MAX_BSON_SIZE } from '../wire-protocol.js';
import type { Collection } from './collection.js';

export const DEFAULT_FIRST_BATCH = 101;
const AS_STORED = { key: '', apply: (doc: Document) => doc };
export const CURSOR_IDLE_MS = 10 * 60_000;

/** Turns stored documents into what the client receives (projection); null when they go out as they are. */
export type BatchTransform = Projector | null;

/** A tailable cursor on a capped collection: after its results, it follows documents inserted later. */
export interface Tail {
  collection: Collection;
  request: FindRequest;
}

interface CursorState {
  ns: string;
  docs: Document[];
  pos: number;
  transform: BatchTransform;
  /** The documents are stored ones (references, not copies): their encoding may be kept, see encoded-batch.ts. */
  stored: boolean;
  lastUsed: number;
  tail?: Tail & { matcher: Matcher; lastKey?: string };
}

export interface Batch {
  /** Serialized as the reply carries them. */
  docs: EncodedDocuments;
  /** Long 0 when exhausted. */
  cursorId: Long;
}

export class CursorStore {
  private readonly cursors = new Map<string, CursorState>();
  private nextId = 1 + Math.floor(Math.random() * 2 ** 40);

  /**
   * Takes the first batch from a result list; registers a cursor for the rest unless everything fitted or the
   * client asked for a single batch. `stored`: the list holds stored documents (references, not copies).
   */
  open(ns: string, docs: Document[], batchSize: number | undefined, transform: BatchTransform, singleBatch = false, tail?: Tail, stored = false): Batch {
    const state: CursorState = { ns, docs, pos: 0, transform, stored, lastUsed: Date.now() };
    // A tailable cursor that found nothing is dead at once, as in MongoDB.
    if (tail && docs.length) state.tail = { ...tail, matcher: compileFilter(tail.request.filter, tail.request) };
    const first = this.take(state, batchSize ?? DEFAULT_FIRST_BATCH);
    if (singleBatch || (state.pos >= docs.length && !state.tail)) return { docs: first, cursorId: Long.ZERO };
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
    if (state.tail && state.pos >= state.docs.length) this.follow(state);
    const docs = this.take(state, batchSize || Infinity);
    if (state.pos >= state.docs.length && !state.tail) {
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

  /** Tailable: the documents inserted after the last one returned, that match the cursor's filter. */
  private follow(state: CursorState): void {
    const tail = state.tail!;
    const coll = tail.collection;
    const last = state.docs[state.docs.length - 1];
    tail.lastKey = last ? coll.keyOf(last) : tail.lastKey;
    if (tail.lastKey !== undefined && !coll.docs.has(tail.lastKey))
      throw new MongoCommandError(136, 'CollectionScan died due to position in capped collection being deleted');
    const next: Document[] = [];
    let after = tail.lastKey === undefined;
    for (const [key, doc] of coll.docs) {
      if (after && tail.matcher.test(doc)) next.push(doc);
      if (key === tail.lastKey) after = true;
    }
    state.docs = next;
    state.pos = 0;
  }

  /** Up to `max` documents, fewer if the batch would exceed the 16 MiB a reply may carry (at least one). */
  private take(state: CursorState, max: number): EncodedDocuments {
    const end = Math.min(state.docs.length, state.pos + max);
    let batch = state.pos === 0 && end === state.docs.length ? state.docs : state.docs.slice(state.pos, end);
    // Stored documents, as they are or through a projection of each alone, may keep their encoded output.
    const view = state.transform ? state.transform.perDocument : AS_STORED;
    if (state.transform && !(state.stored && view)) batch = state.transform(batch);
    const encoded = encodeBatch(batch, MAX_BSON_SIZE, state.stored ? (view ?? null) : null);
    state.pos += encoded.count;
    return encoded;
  }
}
