import { describe, expect, it } from '@jest/globals';
import { deserialize, type Document } from 'bson';
import { encodeBatch } from '../src/encoded-batch.js';

const asStored = { key: '', apply: (doc: Document) => doc };

/** The documents a batch's parts encode, decoded back. */
function decoded(parts: Uint8Array[]): Document[] {
  return Object.values(deserialize(Buffer.concat(parts)));
}

describe('encodeBatch', () => {
  it('keeps the encoding of a stored document sent through a view, and encodes a document of its own afresh', () => {
    const stored = { _id: 1, name: 'Ada' };
    const first = encodeBatch([stored], 16 * 1024 * 1024, asStored);
    const again = encodeBatch([stored], 16 * 1024 * 1024, asStored);
    // parts: length prefix, then per document its element header and its bytes, then the terminator.
    expect(again.parts[2]).toBe(first.parts[2]);
    expect(decoded(again.parts)).toEqual([stored]);
    const own = encodeBatch([stored], 16 * 1024 * 1024, null);
    expect(own.parts[2]).not.toBe(first.parts[2]);
    expect(decoded(own.parts)).toEqual([stored]);
  });

  it('keeps at most 32 MiB of encodings: past that, the kept ones are dropped and encoded again on their next read', () => {
    const kept = { _id: 'kept' };
    const first = encodeBatch([kept], 16 * 1024 * 1024, asStored).parts[2];
    const big = Array.from({ length: 40 }, (_, i) => ({ _id: i, blob: 'x'.repeat(1024 * 1024) }));
    for (const doc of big) encodeBatch([doc], 16 * 1024 * 1024, asStored);
    expect(encodeBatch([kept], 16 * 1024 * 1024, asStored).parts[2]).not.toBe(first);
  });
});
