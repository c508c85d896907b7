/**
 * Cursor batches encoded once. A batch's documents are serialized as they are taken (which is also how the 16 MiB
 * limit of a reply is measured), into the BSON array the reply carries; the reply around it is then assembled from
 * those bytes instead of sizing and serializing every document a second time. Stored documents keep their bytes
 * for the next read (see `cache`).
 */
import { serialize, type Document } from 'bson';

const SERIALIZE_OPTIONS = { ignoreUndefined: true } as const;

/** A BSON array of documents, already serialized (`bytes` is the whole array document). */
export class EncodedDocuments {
  constructor(
    readonly bytes: Buffer,
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
let cache = new WeakMap<Document, Uint8Array>();
let cachedBytes = 0;

function bytesOf(doc: Document, stored: boolean): Uint8Array {
  if (!stored) return serialize(doc, SERIALIZE_OPTIONS);
  let bytes = cache.get(doc);
  if (!bytes) {
    // A copy of its own: serialize() may answer a slice of a shared pool, which the cache would keep alive.
    bytes = new Uint8Array(serialize(doc, SERIALIZE_OPTIONS));
    if (cachedBytes + bytes.length > CACHE_BYTES) {
      cache = new WeakMap();
      cachedBytes = 0;
    }
    cache.set(doc, bytes);
    cachedBytes += bytes.length;
  }
  return bytes;
}

/**
 * The first documents of `docs` as a BSON array: all of them, or as many as keep their total size within
 * `maxBytes` (always at least one). `stored`: they are stored documents (not projected or computed), whose
 * encoding may be kept for the next read.
 */
export function encodeBatch(docs: Document[], maxBytes: number, stored: boolean): EncodedDocuments {
  const parts: Uint8Array[] = [];
  let docBytes = 0;
  let length = 5;
  for (let n = 0; n < docs.length; n++) {
    const bytes = bytesOf(docs[n], stored);
    docBytes += bytes.length;
    if (n > 0 && docBytes > maxBytes) break;
    parts.push(bytes);
    length += 2 + String(n).length + bytes.length;
  }
  const out = Buffer.allocUnsafe(length);
  out.writeInt32LE(length, 0);
  let at = 4;
  for (let n = 0; n < parts.length; n++) {
    out[at++] = TYPE_DOCUMENT;
    at += out.write(String(n), at, 'latin1');
    out[at++] = 0;
    out.set(parts[n], at);
    at += parts[n].length;
  }
  out[at] = 0;
  return new EncodedDocuments(out, parts.length);
}

const elementHeader = (type: number, key: string) => Buffer.concat([Buffer.of(type), Buffer.from(key, 'utf8'), Buffer.of(0)]);

/** The elements of a document without its length prefix and terminator. */
function elementsOf(doc: Document): Buffer {
  const bytes = serialize(doc, SERIALIZE_OPTIONS);
  return Buffer.from(bytes.buffer, bytes.byteOffset + 4, bytes.byteLength - 5);
}

const holdsEncoded = (v: unknown): boolean =>
  v instanceof EncodedDocuments || (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype && Object.values(v).some((x) => x instanceof EncodedDocuments));

/** Serializes a reply; `EncodedDocuments` in it (at most two levels deep: `cursor.firstBatch`) go in as they are. */
export function serializeReply(doc: Document): Buffer {
  const values = Object.values(doc);
  if (!values.some(holdsEncoded)) {
    const bytes = serialize(doc, SERIALIZE_OPTIONS);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  const parts: Buffer[] = [Buffer.alloc(4)];
  let plain: Document = {};
  const flush = () => {
    if (Object.keys(plain).length) parts.push(elementsOf(plain));
    plain = {};
  };
  for (const [key, value] of Object.entries(doc)) {
    if (value instanceof EncodedDocuments) {
      flush();
      parts.push(elementHeader(TYPE_ARRAY, key), value.bytes);
    } else if (holdsEncoded(value)) {
      flush();
      parts.push(elementHeader(TYPE_DOCUMENT, key), serializeReply(value as Document));
    } else {
      plain[key] = value;
    }
  }
  flush();
  parts.push(Buffer.alloc(1));
  const out = Buffer.concat(parts);
  out.writeInt32LE(out.length, 0);
  return out;
}
