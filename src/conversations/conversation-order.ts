import { Types, type QueryFilter } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import type { Conversation } from './conversation.schema.js';

/**
 * The orders of the conversations list (contract section 14) and the positions its cursors carry:
 * - `created`: newest first, by `_id` (an ObjectId grows with its creation time);
 * - `lastActivity`: most recent message first (`lastActivityAt`, then `_id`), conversations without messages by
 *   their creation;
 * - `waiting`: longest in the queue first (`queuedAt`, then `_id`), those never queued after all others.
 * Each is a keyset walk: a page continues strictly after the last conversation of the previous one, so it never
 * repeats one whose key did not change. A key only moves forward in time (a new message, a new entry in the queue),
 * which moves the conversation ahead of a `lastActivity` walk (never shown again in it) and behind a `waiting` walk
 * (shown again, later in the same walk): see docs/inbox.md.
 */
export const CONVERSATION_SORTS = ['created', 'lastActivity', 'waiting'] as const;
export type ConversationSort = (typeof CONVERSATION_SORTS)[number];

/** Where a walk stands: the last conversation shown, by its sort key (none for `created`: the `_id` is the key). */
export interface ConversationPosition {
  sort: ConversationSort;
  /** `lastActivityAt` or `queuedAt` (null: a conversation never queued, in the waiting walk's tail). */
  key: Date | null;
  id: Types.ObjectId;
}

const VERSION = 'c2';
const SORT_CODES: Record<ConversationSort, string> = { created: 'c', lastActivity: 'a', waiting: 'w' };
/** The earliest time a Date holds: `{ $gte: EARLIEST_DATE }` is "has a time", as an index range (not a scan). */
export const EARLIEST_DATE = new Date(-8.64e15);

export function encodeConversationCursor(position: ConversationPosition): string {
  const key = position.sort === 'created' ? '' : position.key === null ? '-' : String(position.key.getTime());
  return Buffer.from([VERSION, SORT_CODES[position.sort], key, position.id.toHexString()].join('.')).toString('base64url');
}

function invalid(message = 'startAfter is not a cursor of this list: pass back a nextCursor unchanged'): RequestValidationException {
  return new RequestValidationException([{ field: 'startAfter', message }]);
}

/**
 * Reads a `startAfter` cursor of the `sort` walk. Cursors of the first version (`c1.<id>`, before the list had
 * sorts) continue the `created` walk, as they always did. A cursor of another sort is refused: it holds another key.
 */
export function decodeConversationCursor(cursor: string, sort: ConversationSort): ConversationPosition {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const legacy = /^c1\.([0-9a-f]{24})$/.exec(decoded);
  const [version, code, key, id, ...rest] = legacy ? [VERSION, SORT_CODES.created, '', legacy[1]] : decoded.split('.');
  const cursorSort = (Object.keys(SORT_CODES) as ConversationSort[]).find((s) => SORT_CODES[s] === code);
  if (version !== VERSION || !cursorSort || rest.length > 0 || !/^[0-9a-f]{24}$/.test(id ?? '')) throw invalid();
  if (cursorSort !== sort) throw invalid(`startAfter continues a walk by ${cursorSort}: send sort=${cursorSort} with it, or start again without it`);
  let time: Date | null = null;
  if (sort === 'lastActivity' || (sort === 'waiting' && key !== '-')) {
    if (!/^-?\d{1,16}$/.test(key ?? '')) throw invalid();
    time = new Date(Number(key));
    if (Number.isNaN(time.getTime())) throw invalid();
  } else if (key !== (sort === 'created' ? '' : '-')) throw invalid();
  return { sort, key: time, id: new Types.ObjectId(id) };
}

/** One read of a walk: its filter (beyond the list's own) and its sort. */
export interface WalkSegment {
  filter: QueryFilter<Conversation>;
  sort: Record<string, 1 | -1>;
}

/** The key a walk continues from after `conversation`. */
export function sortKeyOf(sort: ConversationSort, conversation: Pick<Conversation, 'lastActivityAt' | 'queuedAt'>): Date | null {
  if (sort === 'lastActivity') return conversation.lastActivityAt;
  return sort === 'waiting' ? (conversation.queuedAt ?? null) : null;
}

/**
 * The reads of a page in walk order, from `after` (exclusive; none: from the start). Each segment is one index range:
 * the time range is written as `key <= t` plus a tie-break on `_id`, so MongoDB bounds the scan by the range (an
 * `$or` of the two halves would not bound it). `waiting` has two segments, queued conversations by `queuedAt`, then
 * those never queued by `_id`; the second is read only when the first does not fill the page.
 */
export function walkSegments(sort: ConversationSort, after: ConversationPosition | null): WalkSegment[] {
  const id = after?.id;
  switch (sort) {
    case 'created':
      return [{ filter: id ? { _id: { $lt: id } } : {}, sort: { _id: -1 } }];
    case 'lastActivity': {
      const t = after?.key;
      const filter: QueryFilter<Conversation> = t ? { lastActivityAt: { $lte: t }, $or: [{ lastActivityAt: { $lt: t } }, { _id: { $lt: id } }] } : {};
      return [{ filter, sort: { lastActivityAt: -1, _id: -1 } }];
    }
    case 'waiting': {
      const never: WalkSegment = { filter: { queuedAt: null, ...(id ? { _id: { $gt: id } } : {}) }, sort: { _id: 1 } };
      if (after && after.key === null) return [never];
      const t = after?.key;
      const filter: QueryFilter<Conversation> = t
        ? { queuedAt: { $gte: t }, $or: [{ queuedAt: { $gt: t } }, { _id: { $gt: id } }] }
        : { queuedAt: { $gte: EARLIEST_DATE } };
      return [{ filter, sort: { queuedAt: 1, _id: 1 } }, { ...never, filter: { queuedAt: null } }];
    }
  }
}
