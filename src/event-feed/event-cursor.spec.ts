import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from '@jest/globals';
import { companyTag, decodeEventCursor, encodeEventCursor } from './event-cursor.js';

const ACME = companyTag('6650f0c2a1b2c3d4e5f60718');
const GLOBEX = companyTag('6650f0c2a1b2c3d4e5f60719');

function refusal(cursor: string, tag = ACME): string {
  try {
    decodeEventCursor(cursor, tag);
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestException);
    return (error as Error).message;
  }
  throw new Error('expected a 400');
}

describe('event cursors', () => {
  it('round-trip a sequence, 0 and the largest safe one included, as opaque base64url', () => {
    for (const sequence of [0, 1, 42, 999_999_999_999_999]) {
      const cursor = encodeEventCursor(sequence, ACME);
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      expect(decodeEventCursor(cursor, ACME)).toBe(sequence);
    }
  });

  it('tag each company apart', () => {
    expect(ACME).toMatch(/^[0-9a-f]{8}$/);
    expect(ACME).not.toBe(GLOBEX);
    expect(refusal(encodeEventCursor(5, GLOBEX))).toBe("This event cursor is not from your company's event feed");
  });

  it.each([
    ['empty', ''],
    ['not base64url', '!!!'],
    ['another kind of cursor', Buffer.from('c1.6650f0c2a1b2c3d4e5f60718').toString('base64url')],
    ['another version', Buffer.from(`e2:5:${ACME}`).toString('base64url')],
    ['a negative sequence', Buffer.from(`e1:-5:${ACME}`).toString('base64url')],
    ['a sequence past 15 digits', Buffer.from(`e1:1234567890123456:${ACME}`).toString('base64url')],
    ['a padded sequence', Buffer.from(`e1:05:${ACME}`).toString('base64url')],
    ['extra characters that decode the same', `${encodeEventCursor(5, ACME)}*`],
    ['base64 padding', `${encodeEventCursor(5, ACME)}=`],
  ])('refuse %s', (_case, cursor) => {
    expect(refusal(cursor)).toBe('Invalid event cursor: pass back a nextCursor of the list or an id of the stream');
  });
});
