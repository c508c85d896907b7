import { BadRequestException } from '@nestjs/common';
import { Types } from 'mongoose';

const VERSION = 'c1.';

/**
 * Cursors are opaque to callers: the `_id` of the last record of a page, versioned and
 * base64url-encoded, so the ordering key can change later without breaking clients.
 */
export function encodeCursor(id: Types.ObjectId): string {
  return Buffer.from(VERSION + id.toHexString()).toString('base64url');
}

export function decodeCursor(cursor: string): Types.ObjectId {
  const decoded = Buffer.from(cursor, 'base64url').toString();
  const hex = decoded.startsWith(VERSION) ? decoded.slice(VERSION.length) : '';
  if (!/^[0-9a-f]{24}$/.test(hex)) throw new BadRequestException('Invalid pagination cursor');
  return new Types.ObjectId(hex);
}
