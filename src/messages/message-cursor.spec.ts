import { BadRequestException } from '@nestjs/common';
import { describe, expect, it } from '@jest/globals';
import { Types } from 'mongoose';
import { decodeMessageCursor, encodeMessageCursor, type MessageCursor } from './message-cursor.js';

const position = { createdAt: new Date('2024-05-01T10:00:00.123Z'), id: new Types.ObjectId('6650f0c2a1b2c3d4e5f60718') };
const encode = (text: string) => Buffer.from(text).toString('base64url');

describe('message cursors', () => {
  it.each<[string, MessageCursor]>([
    ['older', { direction: 'older', position, until: null }],
    ['newer', { direction: 'newer', position, until: null }],
    ['newer within a window', { direction: 'newer', position, until: new Date('2024-05-02T00:00:00Z') }],
    ['without private notes', { direction: 'older', position, until: null, private: false }],
    ['private notes only', { direction: 'newer', position, until: new Date('2024-05-02T00:00:00Z'), private: true }],
  ])('round-trips a %s cursor as opaque base64url', (_, cursor) => {
    const encoded = encodeMessageCursor(cursor);
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeMessageCursor(encoded)).toEqual(cursor);
  });

  it.each([
    ['not base64 of anything meaningful', 'bm90LWEtY3Vyc29y'],
    ['a conversation-list cursor', encode('c1.6650f0c2a1b2c3d4e5f60718')],
    ['another version', encode('m2.o.1714557600123.6650f0c2a1b2c3d4e5f60718')],
    ['an unknown direction', encode('m1.x.1714557600123.6650f0c2a1b2c3d4e5f60718')],
    ['an unknown filter', encode('m1.o*.1714557600123.6650f0c2a1b2c3d4e5f60718')],
    ['two filters', encode('m1.o-+.1714557600123.6650f0c2a1b2c3d4e5f60718')],
    ['a malformed id', encode('m1.o.1714557600123.zzz')],
    ['a malformed time', encode('m1.o.soon.6650f0c2a1b2c3d4e5f60718')],
    ['a malformed bound', encode('m1.n.1714557600123.6650f0c2a1b2c3d4e5f60718.later')],
    ['extra parts', encode('m1.n.1714557600123.6650f0c2a1b2c3d4e5f60718.1.2')],
    ['a missing time', encode('m1.o')],
    ['an empty string', ''],
  ])('refuses %s with a 400', (_, value) => {
    expect(() => decodeMessageCursor(value)).toThrow(new BadRequestException('Invalid pagination cursor'));
  });
});
