import { BadRequestException } from '@nestjs/common';
import { Types } from 'mongoose';

const VERSION = 'm1';

/** `older` pages walk back in time from `before`; `newer` pages walk forward from `after`. */
export type PageDirection = 'older' | 'newer';

/** A position in a conversation's messages, ordered by `createdAt` and then `_id`. */
export interface MessagePosition {
  createdAt: Date;
  id: Types.ObjectId;
}

/**
 * Where the next page starts and which way it goes. A cursor is self-contained: it also carries the
 * `before` bound of an `after`/`before` window and the `private` filter, so the caller passes only `cursor` (and `limit`).
 */
export interface MessageCursor {
  direction: PageDirection;
  position: MessagePosition;
  until: Date | null;
  /** false: without private notes; true: notes only; undefined: every message. */
  private?: boolean;
}

const DIRECTION_CODES: Record<PageDirection, string> = { older: 'o', newer: 'n' };
/** Appended to the direction's code: the `private` filter (none when absent, as in cursors made before notes). */
const PRIVATE_CODES = { false: '-', true: '+' } as const;

export function encodeMessageCursor(cursor: MessageCursor): string {
  const filter = cursor.private === undefined ? '' : PRIVATE_CODES[`${cursor.private}`];
  const parts = [
    VERSION,
    DIRECTION_CODES[cursor.direction] + filter,
    String(cursor.position.createdAt.getTime()),
    cursor.position.id.toHexString(),
  ];
  if (cursor.until) parts.push(String(cursor.until.getTime()));
  return Buffer.from(parts.join('.')).toString('base64url');
}

function invalid(): BadRequestException {
  return new BadRequestException('Invalid pagination cursor');
}

function millis(value: string): Date {
  if (!/^\d{1,16}$/.test(value)) throw invalid();
  const date = new Date(Number(value));
  if (Number.isNaN(date.getTime())) throw invalid();
  return date;
}

export function decodeMessageCursor(value: string): MessageCursor {
  const [version, code, createdAt, id, until, ...rest] = Buffer.from(value, 'base64url').toString().split('.');
  if (version !== VERSION || rest.length > 0 || !/^[0-9a-f]{24}$/.test(id ?? '')) throw invalid();
  const direction = (Object.keys(DIRECTION_CODES) as PageDirection[]).find((key) => DIRECTION_CODES[key] === code?.[0]);
  const filter = code?.slice(1) ?? '';
  if (!direction || createdAt === undefined || !['', PRIVATE_CODES.false, PRIVATE_CODES.true].includes(filter)) throw invalid();
  return {
    direction,
    position: { createdAt: millis(createdAt), id: new Types.ObjectId(id) },
    until: until === undefined ? null : millis(until),
    ...(filter ? { private: filter === PRIVATE_CODES.true } : {}),
  };
}
