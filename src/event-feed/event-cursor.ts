import { BadRequestException } from '@nestjs/common';
import { createHash } from 'node:crypto';

const VERSION = 'e1';
const CURSOR = /^e1:(\d{1,15}):([0-9a-f]{8})$/;

/** A short tag of the company whose log a cursor points into: another company's cursor is refused, not misread. */
export function companyTag(companyId: string): string {
  return createHash('sha256').update(companyId).digest('hex').slice(0, 8);
}

/**
 * A position in a company's event log, the same in both interfaces: the sequence of the last event read (or
 * of the log's end when caught up) and the company's tag, versioned and base64url-encoded, opaque to callers.
 * Nothing else is needed to tell a cursor older than the retention: the events after it are gone from the log.
 */
export function encodeEventCursor(sequence: number, tag: string): string {
  return Buffer.from(`${VERSION}:${sequence}:${tag}`).toString('base64url');
}

/** The sequence a cursor of this company's feed points at; anything else is a 400. */
export function decodeEventCursor(cursor: string, tag: string): number {
  const match = CURSOR.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  // base64url decoding skips characters it does not know: only the exact encoding is a cursor.
  if (!match || encodeEventCursor(Number(match[1]), match[2]) !== cursor) {
    throw new BadRequestException('Invalid event cursor: pass back a nextCursor of the list or an id of the stream');
  }
  if (match[2] !== tag) throw new BadRequestException("This event cursor is not from your company's event feed");
  return Number(match[1]);
}
