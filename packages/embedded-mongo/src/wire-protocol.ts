/**
 * MongoDB wire protocol framing: parses OP_MSG and the legacy OP_QUERY, builds OP_MSG and OP_REPLY answers.
 * https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
 * Parsing throws `ProtocolError` for anything malformed; the server closes that connection only.
 */
import { deserialize, type Document } from 'bson';
import { serializeReply } from './encoded-batch.js';
import { decodeValues } from './query/doubles.js';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

export const HEADER_SIZE = 16;
export const MAX_MESSAGE_SIZE = 48_000_000;
export const MAX_BSON_SIZE = 16 * 1024 * 1024;

const FLAG_CHECKSUM_PRESENT = 1 << 0;
const FLAG_MORE_TO_COME = 1 << 1;

export class ProtocolError extends Error {}

export interface MessageHeader {
  length: number;
  requestId: number;
  responseTo: number;
  opCode: number;
}

/** A command extracted from a request, whatever its opcode. */
export interface IncomingCommand {
  header: MessageHeader;
  body: Document;
  /** The database named by `$db` (OP_MSG) or by the `<db>.$cmd` namespace (OP_QUERY). */
  db: string;
  /** OP_MSG `moreToCome`: the client expects no reply. */
  noReply: boolean;
  legacy: boolean;
}

/**
 * Values keep their BSON types and `decodeValues` makes them what the engine stores: Longs stay `Long` objects so
 * they round-trip as int64 (bigint would break mingo), whole-number doubles stay `Double` (query/doubles.ts), other
 * int32 and double values become numbers, Binary stays Binary, BSON regexes become RegExp.
 */
const DESERIALIZE_OPTIONS = { promoteLongs: false, promoteValues: false, validation: { utf8: true } } as const;

/** A BSON document as the engine stores it (see DESERIALIZE_OPTIONS); Binary values in it are views on `bytes`. */
export function decodeDocument(bytes: Uint8Array): Document {
  return decodeValues(deserialize(bytes, DESERIALIZE_OPTIONS)) as Document;
}

export function readHeader(buf: Buffer): MessageHeader {
  return {
    length: buf.readInt32LE(0),
    requestId: buf.readInt32LE(4),
    responseTo: buf.readInt32LE(8),
    opCode: buf.readInt32LE(12),
  };
}

function parseDocument(buf: Buffer, offset: number, end: number): { doc: Document; next: number } {
  if (offset + 5 > end) throw new ProtocolError('truncated BSON document');
  const size = buf.readInt32LE(offset);
  if (size < 5 || offset + size > end) throw new ProtocolError('invalid BSON document length');
  try {
    // Deserialized Binary values are views on their input: decoding a copy of just this document keeps a stored
    // document from retaining the whole (up to 48 MB) message it arrived in. A document that is most of the memory
    // it lies in is decoded in place: a copy would only double what that message costs while it is decoded.
    const bytes = buf.subarray(offset, offset + size);
    return { doc: decodeDocument(2 * size >= buf.buffer.byteLength ? bytes : Buffer.from(bytes)), next: offset + size };
  } catch (err) {
    throw new ProtocolError(`invalid BSON: ${(err as Error).message}`);
  }
}

function readCString(buf: Buffer, offset: number, end: number): { value: string; next: number } {
  const zero = buf.indexOf(0, offset);
  if (zero < 0 || zero >= end) throw new ProtocolError('unterminated cstring');
  return { value: buf.toString('utf8', offset, zero), next: zero + 1 };
}

/** OP_MSG: flag bits, one kind-0 body and any number of kind-1 document sequences merged into the body as arrays. */
export function parseOpMsg(header: MessageHeader, msg: Buffer): IncomingCommand {
  const flags = msg.readUInt32LE(HEADER_SIZE);
  // Bits 2..15 are required bits: an unknown one must make the message fail, per the specification.
  if (flags & 0xfffc) throw new ProtocolError(`unsupported OP_MSG flag bits ${flags}`);
  const end = flags & FLAG_CHECKSUM_PRESENT ? msg.length - 4 : msg.length;
  let offset = HEADER_SIZE + 4;
  let body: Document | undefined;
  const sequences: [string, Document[]][] = [];
  while (offset < end) {
    const kind = msg[offset++];
    if (kind === 0) {
      if (body) throw new ProtocolError('OP_MSG with more than one body section');
      const r = parseDocument(msg, offset, end);
      body = r.doc;
      offset = r.next;
    } else if (kind === 1) {
      if (offset + 4 > end) throw new ProtocolError('truncated document sequence');
      const seqEnd = offset + msg.readInt32LE(offset);
      if (seqEnd > end || seqEnd < offset + 5) throw new ProtocolError('invalid document sequence length');
      const id = readCString(msg, offset + 4, seqEnd);
      const docs: Document[] = [];
      for (let p = id.next; p < seqEnd; ) {
        const r = parseDocument(msg, p, seqEnd);
        docs.push(r.doc);
        p = r.next;
      }
      sequences.push([id.value, docs]);
      offset = seqEnd;
    } else {
      throw new ProtocolError(`unknown OP_MSG section kind ${kind}`);
    }
  }
  if (!body) throw new ProtocolError('OP_MSG without a body section');
  for (const [name, docs] of sequences) body[name] = docs;
  const db = typeof body.$db === 'string' ? body.$db : 'admin';
  return { header, body, db, noReply: (flags & FLAG_MORE_TO_COME) !== 0, legacy: false };
}

/** OP_QUERY, which modern drivers use only for the first handshake, on `<db>.$cmd`. */
export function parseOpQuery(header: MessageHeader, msg: Buffer): IncomingCommand {
  const ns = readCString(msg, HEADER_SIZE + 4, msg.length);
  const { doc } = parseDocument(msg, ns.next + 8, msg.length);
  // Old clients wrap the command as { $query: {...}, $readPreference: ... }.
  const body = doc.$query && typeof doc.$query === 'object' ? (doc.$query as Document) : doc;
  const dot = ns.value.indexOf('.');
  const db = dot > 0 ? ns.value.slice(0, dot) : ns.value;
  if (!ns.value.endsWith('.$cmd')) throw new ProtocolError(`OP_QUERY is only supported for commands, not on ${ns.value}`);
  return { header, body, db, noReply: false, legacy: true };
}

function withHeader(prefix: Buffer, doc: Document, requestId: number, responseTo: number, opCode: number): Buffer {
  const body = serializeReply(doc);
  const length = HEADER_SIZE + prefix.length + body.length;
  const header = Buffer.allocUnsafe(HEADER_SIZE);
  header.writeInt32LE(length, 0);
  header.writeInt32LE(requestId, 4);
  header.writeInt32LE(responseTo, 8);
  header.writeInt32LE(opCode, 12);
  return Buffer.concat([header, prefix, ...body.parts], length);
}

export function buildOpMsg(doc: Document, requestId: number, responseTo: number): Buffer {
  const prefix = Buffer.alloc(5); // flagBits = 0, then section kind 0
  return withHeader(prefix, doc, requestId, responseTo, OP_MSG);
}

export function buildOpReply(doc: Document, requestId: number, responseTo: number): Buffer {
  const fields = Buffer.alloc(20); // responseFlags, cursorID (int64 0), startingFrom
  fields.writeInt32LE(1, 16); // numberReturned
  return withHeader(fields, doc, requestId, responseTo, OP_REPLY);
}
