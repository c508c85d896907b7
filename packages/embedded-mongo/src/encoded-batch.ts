/**
 * Cursor batches encoded once. A batch's documents are serialized as they are taken (which is also how the 16 MiB
 * limit of a reply is measured), into the BSON array the reply carries; the reply around it is then assembled from
 * those bytes instead of sizing and serializing every document a second time. Stored documents keep their bytes
 * for the next read (see `cache`).
 */
import { serialize, type Document } from 'bson';
import type { DocumentView } from './query/projection.js';

const SERIALIZE_OPTIONS = { ignoreUndefined: true } as const;

/** A BSON array of documents, already serialized: `parts` laid end to end are the array document (`length` bytes). */
export class EncodedDocuments {
  constructor(
    readonly parts: Uint8Array[],
    readonly length: number,
    readonly count: number,
  ) {}
}

const TYPE_DOCUMENT = 0x03;
const TYPE_ARRAY = 0x04;

/**
 * The BSON of stored documents recently sent. Stored documents are never modified in place (an update swaps in a
 * new object), so a document's bytes stay right while it exists; the map holds them weakly, and is dropped whole
 * once it has taken CACHE_BYTES, which bounds its memory while pages read again and again stay encoded.
 */
const CACHE_BYTES = 32 * 1024 * 1024;
/** Per view of the documents (`''`: as stored; else a projection's key), their encoded output. */
let cache = new Map<string, WeakMap<Document, Uint8Array>>();
let cachedBytes = 0;

function bytesOf(doc: Document, view: DocumentView | null): Uint8Array {
  if (!view) return serialize(doc, SERIALIZE_OPTIONS);
  let byDoc = cache.get(view.key);
  let bytes = byDoc?.get(doc);
  if (!bytes) {
    // A copy of its own: serialize() may answer a slice of a shared pool, which the cache would keep alive.
    bytes = new Uint8Array(serialize(view.apply(doc), SERIALIZE_OPTIONS));
    if (cachedBytes + bytes.length > CACHE_BYTES) {
      cache = new Map();
      cachedBytes = 0;
      byDoc = undefined;
    }
    if (!byDoc) cache.set(view.key, (byDoc = new WeakMap()));
    byDoc.set(doc, bytes);
    cachedBytes += bytes.length;
  }
  return bytes;
}

/**
 * The first documents of `docs` as a BSON array: all of them, or as many as keep their total size within
 * `maxBytes` (always at least one). `view`: they are stored documents, sent through that view, whose encoding may be
 * kept for the next read; null: documents of their own (computed or already projected).
 */
export function encodeBatch(docs: Document[], maxBytes: number, view: DocumentView | null): EncodedDocuments {
  const encoded: Uint8Array[] = [];
  let docBytes = 0;
  let headerBytes = 0;
  for (let n = 0; n < docs.length; n++) {
    const bytes = bytesOf(docs[n], view);
    docBytes += bytes.length;
    if (n > 0 && docBytes > maxBytes) {
      docBytes -= bytes.length;
      break;
    }
    encoded.push(bytes);
    headerBytes += 2 + String(n).length;
  }
  // The length prefix, each element's type and key, the terminator: one small buffer, referred to in slices.
  const frame = Buffer.allocUnsafe(4 + headerBytes + 1);
  const length = frame.length + docBytes;
  frame.writeInt32LE(length, 0);
  const parts: Uint8Array[] = [frame.subarray(0, 4)];
  let at = 4;
  for (let n = 0; n < encoded.length; n++) {
    const start = at;
    frame[at++] = TYPE_DOCUMENT;
    at += frame.write(String(n), at, 'latin1');
    frame[at++] = 0;
    parts.push(frame.subarray(start, at), encoded[n]);
  }
  frame[at] = 0;
  parts.push(frame.subarray(at, at + 1));
  return new EncodedDocuments(parts, length, encoded.length);
}

const elementHeader = (type: number, key: string) => Buffer.from(`${String.fromCharCode(type)}${key}\0`, 'utf8');

/** The elements of a document without its length prefix and terminator. */
function elementsOf(doc: Document): Uint8Array {
  const bytes = serialize(doc, SERIALIZE_OPTIONS);
  return bytes.subarray(4, bytes.length - 1);
}

const holdsEncoded = (v: unknown): boolean =>
  v instanceof EncodedDocuments || (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype && Object.values(v).some((x) => x instanceof EncodedDocuments));

/**
 * A reply as the pieces of its BSON, laid end to end (`EncodedDocuments` in it, at most two levels deep as in
 * `cursor.firstBatch`, go in as they are), so that the message around it is assembled in one copy.
 */
export function serializeReply(doc: Document): { parts: Uint8Array[]; length: number } {
  const values = Object.values(doc);
  if (!values.some(holdsEncoded)) {
    const bytes = serialize(doc, SERIALIZE_OPTIONS);
    return { parts: [bytes], length: bytes.length };
  }
  const prefix = Buffer.allocUnsafe(4);
  const parts: Uint8Array[] = [prefix];
  let length = 4;
  const add = (bytes: Uint8Array) => {
    parts.push(bytes);
    length += bytes.length;
  };
  let plain: Document = {};
  const flush = () => {
    if (Object.keys(plain).length) add(elementsOf(plain));
    plain = {};
  };
  for (const [key, value] of Object.entries(doc)) {
    if (value instanceof EncodedDocuments) {
      flush();
      add(elementHeader(TYPE_ARRAY, key));
      parts.push(...value.parts);
      length += value.length;
    } else if (holdsEncoded(value)) {
      flush();
      add(elementHeader(TYPE_DOCUMENT, key));
      const inner = serializeReply(value as Document);
      parts.push(...inner.parts);
      length += inner.length;
    } else {
      plain[key] = value;
    }
  }
  flush();
  add(Buffer.of(0));
  prefix.writeInt32LE(length, 0);
  return { parts, length };
}
