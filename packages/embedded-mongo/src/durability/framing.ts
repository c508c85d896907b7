/**
 * Record framing of the journal and snapshot files: `[payload length u32 LE][CRC-32 of the payload u32 LE][payload]`,
 * the payload a BSON document. A reader stops at the first record that is incomplete, implausibly long or whose
 * checksum does not match, and says where the last good record ended: a torn tail is detected, never replayed half.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { serialize, type Document } from 'bson';
import { decodeDocument } from '../wire-protocol.js';

const FRAME_HEADER = 8;
/** The smallest BSON document is 5 bytes; a run of zeros (a file extended but not written) is no record. */
const MIN_PAYLOAD = 5;
/** A 16 MiB document plus its record's fields, with room to spare; anything longer is damage. */
export const MAX_PAYLOAD = 64 * 1024 * 1024;
const READ_CHUNK = 1024 * 1024;

/** As replies encode them: undefined fields are left out, as a client would see them. */
const SERIALIZE_OPTIONS = { ignoreUndefined: true } as const;

export function frame(doc: Document): Buffer {
  const bson = serialize(doc, SERIALIZE_OPTIONS);
  const out = Buffer.allocUnsafe(FRAME_HEADER + bson.length);
  out.writeUInt32LE(bson.length, 0);
  out.writeUInt32LE(crc32(bson), 4);
  out.set(bson, FRAME_HEADER);
  return out;
}

/**
 * Decodes a payload the reader returned (its own copy, so decoded binary values retain only their record) exactly as
 * the wire protocol decodes what clients send, so a recovered document has the very values it was stored with.
 * Numbers of the records' own fields (LSNs, counts) may then be a bson `Double`: read them with `Number()`.
 */
export function decode(payload: Buffer): Document {
  return decodeDocument(payload);
}

/** Reads the framed records of a file in order, synchronously (recovery runs before the server listens). */
export class RecordReader {
  private readonly fd: number;
  readonly size: number;
  private buf = Buffer.allocUnsafe(READ_CHUNK);
  private start = 0;
  private end = 0;
  private filePos = 0;
  /** File offset just after the last valid record. */
  offset = 0;
  /** Why reading stopped before the end of the file, or null. */
  problem: string | null = null;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'r');
    this.size = fstatSync(this.fd).size;
  }

  /** The next record's payload, or null at the end of the file or at the first invalid record (see `problem`). */
  next(): Buffer | null {
    if (!this.fill(FRAME_HEADER)) {
      if (this.end > this.start) this.problem = `${this.end - this.start} bytes of an incomplete record header`;
      return null;
    }
    const length = this.buf.readUInt32LE(this.start);
    const checksum = this.buf.readUInt32LE(this.start + 4);
    if (length < MIN_PAYLOAD || length > MAX_PAYLOAD) {
      this.problem = `a record with an impossible length (${length})`;
      return null;
    }
    if (!this.fill(FRAME_HEADER + length)) {
      this.problem = `an incomplete record (${this.end - this.start} of ${FRAME_HEADER + length} bytes)`;
      return null;
    }
    const payload = Buffer.from(this.buf.subarray(this.start + FRAME_HEADER, this.start + FRAME_HEADER + length));
    if (crc32(payload) !== checksum) {
      this.problem = 'a record whose checksum does not match';
      return null;
    }
    this.start += FRAME_HEADER + length;
    this.offset += FRAME_HEADER + length;
    return payload;
  }

  close(): void {
    closeSync(this.fd);
  }

  /** Makes at least `n` unread bytes available; false when the file ends first. */
  private fill(n: number): boolean {
    while (this.end - this.start < n) {
      if (this.filePos >= this.size) return false;
      if (this.start > 0) {
        this.buf.copy(this.buf, 0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      }
      if (this.buf.length < n) {
        const grown = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
        this.buf.copy(grown, 0, 0, this.end);
        this.buf = grown;
      }
      const read = readSync(this.fd, this.buf, this.end, this.buf.length - this.end, this.filePos);
      if (read === 0) return false;
      this.end += read;
      this.filePos += read;
    }
    return true;
  }
}
