/**
 * Whole-number doubles. JavaScript has one number type and the driver writes an integral number as int32, so a
 * stored `5.0` would come back as `5` (int32) and `$type: 'double'` would miss it. The engine therefore keeps
 * integral doubles of stored data as bson `Double` objects (every other number is a plain JS number):
 * - messages are decoded with BSON types kept; `commandValues` turns everything that is not stored data (filters,
 *   options, pipelines) back into plain numbers, so only documents and update values carry `Double`s;
 * - comparisons, sorts, indexes and update arithmetic treat `Double` as a number (bson-values, query overrides);
 * - mingo's expression evaluation sees plain numbers (`plainNumbers`), and documents rewritten by a pipeline get back
 *   the `Double` of every value they kept unchanged (`restoreDoubles`).
 */
import { Double, type DBRef, type Document } from 'bson';
import { isPlainObject, setOwn } from '../bson-values.js';

const bsonType = (v: unknown) => (v as { _bsontype?: string } | null)?._bsontype;

/**
 * Values decoded with `promoteValues: false`, made what the engine stores (in place): Int32 become numbers, doubles
 * numbers unless integral, symbols strings. Longs, Binary and the rest stay as they are.
 */
export function decodeValues(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const t = bsonType(value);
  if (t === 'Int32') return (value as { value: number }).value;
  if (t === 'Double') {
    const n = (value as Double).value;
    return Number.isInteger(n) ? value : n;
  }
  if (t === 'BSONSymbol') return (value as { value: string }).value;
  if (t === 'DBRef') return dbRefDocument(value as DBRef);
  if (t) return value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = decodeValues(value[i]);
  } else if (isPlainObject(value)) {
    for (const k of Object.keys(value)) {
      const v = value[k];
      if (v !== null && typeof v === 'object') setOwn(value, k, decodeValues(v));
    }
  }
  return value;
}

/** bson decodes `{ $ref, $id, $db?, ...}` as a DBRef object; the engine keeps the document MongoDB stores. */
function dbRefDocument(ref: DBRef): Document {
  const doc: Document = { $ref: ref.collection, $id: decodeValues(ref.oid) };
  if (ref.db) doc.$db = ref.db;
  for (const [k, v] of Object.entries(ref.fields)) setOwn(doc, k, decodeValues(v));
  return doc;
}

/** `value` with every `Double` as a plain number; objects are copied only where something changed. */
export function plainNumbers<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (bsonType(value) === 'Double') return (value as unknown as Double).value as T;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v = plainNumbers(value[i]);
      if (v !== value[i]) (out ??= value.slice())[i] = v;
    }
    return (out ?? value) as T;
  }
  if (!isPlainObject(value)) return value;
  const doc = value as Document;
  let out: Document | undefined;
  for (const k of Object.keys(doc)) {
    const v = plainNumbers(doc[k]);
    if (v !== doc[k]) {
      out ??= { ...doc };
      setOwn(out, k, v);
    }
  }
  return (out ?? value) as T;
}

/** Copies `after`'s numbers that equal a `Double` at the same place in `before` back into `Double`s (in place). */
export function restoreDoubles(before: unknown, after: unknown): unknown {
  if (typeof after === 'number' && bsonType(before) === 'Double' && (before as Double).value === after) return before;
  if (Array.isArray(after) && Array.isArray(before)) {
    for (let i = 0; i < after.length; i++) after[i] = restoreDoubles(before[i], after[i]);
  } else if (isPlainObject(after) && isPlainObject(before)) {
    for (const k of Object.keys(after)) if (k in before) setOwn(after, k, restoreDoubles(before[k], after[k]));
  }
  return after;
}

/** Fields of each command that hold stored data, where integral doubles must stay `Double`s. */
const DATA_FIELDS: Record<string, (body: Document) => void> = {
  insert: (body) => keepData(body, ['documents']),
  update: (body) => {
    const updates = body.updates;
    keepData(body, ['updates']);
    if (Array.isArray(updates))
      body.updates = updates.map((s) => (isPlainObject(s) ? { ...plainNumbers({ ...s, u: undefined }), u: Array.isArray(s.u) ? plainNumbers(s.u) : s.u } : s));
  },
  findAndModify: (body) => keepData(body, Array.isArray(body.update) ? [] : ['update']),
  findandmodify: (body) => keepData(body, Array.isArray(body.update) ? [] : ['update']),
};

function keepData(body: Document, fields: string[]): void {
  for (const k of Object.keys(body)) if (!fields.includes(k)) setOwn(body, k, plainNumbers(body[k]));
}

/** Makes every part of a command body except its stored data plain numbers (in place). */
export function commandValues(name: string, body: Document): void {
  const keep = DATA_FIELDS[name];
  if (keep) keep(body);
  else keepData(body, []);
}
