/**
 * BSON value semantics the engine needs beyond what mingo provides: MongoDB's cross-type comparison order (for
 * index keys and find sorts), canonical `_id` keys for the primary map, cheap deep copies that keep bson classes,
 * and the shell-like rendering used in duplicate-key messages.
 */
import { Binary, Decimal128, Long, ObjectId, Timestamp, type Document } from 'bson';
import type { Collator } from './query/collation.js';

/** MongoDB's canonical type order: MinKey < null < numbers < strings < objects < arrays < BinData < ObjectId < bool < Date < Timestamp < RegExp < MaxKey. */
export function typeRank(v: unknown): number {
  if (v === null || v === undefined) return 2;
  switch (typeof v) {
    case 'number':
    case 'bigint':
      return 3;
    case 'string':
      return 4;
    case 'boolean':
      return 9;
  }
  if (Array.isArray(v)) return 6;
  if (v instanceof Date) return 10;
  if (v instanceof RegExp) return 12;
  switch ((v as { _bsontype?: string })._bsontype) {
    case 'MinKey':
      return 1;
    case 'Long':
    case 'Int32':
    case 'Double':
    case 'Decimal128':
      return 3;
    case 'BSONSymbol':
      return 4;
    case 'Binary':
      return 7;
    case 'ObjectId':
      return 8;
    case 'Timestamp':
      return 11;
    case 'BSONRegExp':
      return 12;
    case 'MaxKey':
      return 13;
  }
  if (v instanceof Uint8Array) return 7;
  return 5;
}

export function toNumber(v: unknown): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  const t = (v as { _bsontype?: string })._bsontype;
  if (t === 'Long') return (v as Long).toNumber();
  if (t === 'Decimal128') return Number.parseFloat((v as Decimal128).toString());
  if (t === 'Int32' || t === 'Double') return (v as { value: number }).value;
  return Number.NaN;
}

const cmp = (a: number | string, b: number | string) => (a < b ? -1 : a > b ? 1 : 0);

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** bson 7 keeps an ObjectId as four 24-bit integers (i0..i3, big-endian order); other versions: hex order. */
type PackedObjectId = ObjectId & { i0?: number; i1?: number; i2?: number; i3?: number };

function compareObjectIds(x: ObjectId, y: ObjectId): number {
  const a = x as PackedObjectId;
  const b = y as PackedObjectId;
  if (typeof a.i0 === 'number' && typeof b.i0 === 'number') return a.i0 - b.i0 || a.i1! - b.i1! || a.i2! - b.i2! || a.i3! - b.i3!;
  return cmp(a.toHexString(), b.toHexString());
}

function compareNumbers(a: unknown, b: unknown): number {
  if (a instanceof Long && b instanceof Long) return a.compare(b);
  const x = toNumber(a);
  const y = toNumber(b);
  // MongoDB orders NaN below every other number.
  if (Number.isNaN(x)) return Number.isNaN(y) ? 0 : -1;
  if (Number.isNaN(y)) return 1;
  return cmp(x, y);
}

function compareObjects(a: Document, b: Document, collator: Collator | null | undefined): number {
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  const n = Math.min(ka.length, kb.length);
  for (let i = 0; i < n; i++) {
    const va = a[ka[i]];
    const vb = b[kb[i]];
    const r = typeRank(va) - typeRank(vb) || cmp(ka[i], kb[i]) || compareBson(va, vb, collator);
    if (r !== 0) return r;
  }
  return ka.length - kb.length;
}

/**
 * Total order over BSON values, as MongoDB compares them in indexes and sorts (null and missing are equal). Strings
 * compare with `collator` when one is given (a non-simple collation), else by code units.
 */
export function compareBson(a: unknown, b: unknown, collator?: Collator | null): number {
  if (a === b) return 0;
  const ta = typeof a;
  if (ta === typeof b) {
    // NaN is neither below nor above anything: compareNumbers orders it below every number, as MongoDB does.
    if (ta === 'number') return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : compareNumbers(a, b);
    if (ta === 'string') return collator ? collator.compare(a as string, b as string) : cmp(a as string, b as string);
    if (a instanceof Date && b instanceof Date) return cmp(a.getTime(), b.getTime());
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 1:
    case 2:
    case 13:
      return 0;
    case 3:
      return compareNumbers(a, b);
    case 4:
      return collator ? collator.compare(String(a), String(b)) : cmp(String(a), String(b));
    case 5:
      return compareObjects(a as Document, b as Document, collator);
    case 6: {
      const x = a as unknown[];
      const y = b as unknown[];
      const n = Math.min(x.length, y.length);
      for (let i = 0; i < n; i++) {
        const r = compareBson(x[i], y[i], collator);
        if (r !== 0) return r;
      }
      return x.length - y.length;
    }
    case 7: {
      const x = a instanceof Binary ? a : new Binary(a as Uint8Array);
      const y = b instanceof Binary ? b : new Binary(b as Uint8Array);
      return x.position - y.position || x.sub_type - y.sub_type || compareBytes(x.value(), y.value());
    }
    case 8:
      return compareObjectIds(a as ObjectId, b as ObjectId);
    case 9:
      return Number(a) - Number(b);
    case 10:
      return cmp((a as Date).getTime(), (b as Date).getTime());
    case 11:
      return (a as Timestamp).compare(b as Timestamp);
    case 12: {
      const x = a as { source?: string; pattern?: string; flags?: string; options?: string };
      const y = b as typeof x;
      return cmp(x.source ?? x.pattern ?? '', y.source ?? y.pattern ?? '') || cmp(x.flags ?? x.options ?? '', y.flags ?? y.options ?? '');
    }
  }
  return 0;
}

/**
 * Canonical string for an `_id`, the key of a collection's primary map. Numbers of every BSON numeric type that are
 * equal map to the same key, as they are the same `_id` for MongoDB.
 */
export function idKey(id: unknown): string {
  switch (typeof id) {
    case 'string':
      return `s${id}`;
    case 'number':
      return `n${id}`;
    case 'boolean':
      return id ? 'T' : 'F';
  }
  if (id === null || id === undefined) return 'z';
  if (id instanceof ObjectId) return `o${id.toHexString()}`;
  if (id instanceof Date) return `d${id.getTime()}`;
  if (typeRank(id) === 3) return `n${toNumber(id)}`;
  return `x${formatValue(id)}`;
}

/**
 * A string that two values share exactly when MongoDB finds them equal (strings compared binary): numbers of every
 * BSON class by value, documents field by field in order, arrays element by element. `$group` keys use it.
 */
export function equalityKey(v: unknown): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Number.isNaN(v) ? 'nNaN' : `n${v === 0 ? 0 : v}`;
    case 'boolean':
      return v ? 'T' : 'F';
  }
  if (v === null || v === undefined) return 'z';
  if (Array.isArray(v)) {
    let key = '[';
    for (let i = 0; i < v.length; i++) key += (i ? ',' : '') + equalityKey(v[i]);
    return `${key}]`;
  }
  if (isPlainObject(v)) {
    let key = '{';
    for (const k of Object.keys(v)) key += `${key.length > 1 ? ',' : ''}${JSON.stringify(k)}:${equalityKey(v[k])}`;
    return `${key}}`;
  }
  switch (typeRank(v)) {
    case 3: {
      // Beyond 2^53 a Long is exact only as itself; doubles there are rarely equal to one, and then differ here.
      const n = toNumber(v);
      return v instanceof Long && !Number.isSafeInteger(n) ? `n${v.toString()}` : equalityKey(n);
    }
    case 4:
      return JSON.stringify(String(v));
    case 7: {
      const b = v instanceof Binary ? v : new Binary(v as Uint8Array);
      return `b${b.sub_type}:${Buffer.from(b.value()).toString('hex')}`;
    }
    case 8:
      return `o${(v as ObjectId).toHexString()}`;
    case 10:
      return `d${(v as Date).getTime()}`;
    case 12:
      return `r${formatValue(v)}`;
  }
  return `${typeRank(v)}:${formatValue(v)}`;
}

/** Deep copy of plain objects and arrays; bson value objects are immutable here and shared, Dates are copied. */
export function cloneDoc<T>(v: T): T {
  if (v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = cloneDoc(v[i]);
    return out as T;
  }
  if (v instanceof Date) return new Date(v.getTime()) as T;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return v;
  const out: Document = {};
  for (const k of Object.keys(v)) setOwn(out, k, cloneDoc((v as Document)[k]));
  return out as T;
}

/** `target[key] = value`, also for a key named `__proto__` (an ordinary field name in BSON). */
export function setOwn(target: Document, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * Whether two values are the same BSON: same types (an int and a double of equal value differ, as do Binary subtypes),
 * same field order. This is how MongoDB decides that an update modified nothing.
 */
export function identical(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || Object.is(a, b);
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return typeof a === 'number' && Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((x, i) => identical(x, b[i]));
  if (Array.isArray(b)) return false;
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (a instanceof RegExp) return b instanceof RegExp && a.source === b.source && a.flags === b.flags;
  const ta = (a as { _bsontype?: string })._bsontype;
  if (ta !== (b as { _bsontype?: string })._bsontype) return false;
  if (ta === 'Binary') return (a as Binary).sub_type === (b as Binary).sub_type && compareBytes((a as Binary).value(), (b as Binary).value()) === 0;
  if (ta === 'Double') return Object.is((a as { value: number }).value, (b as { value: number }).value);
  if (ta) return compareBson(a, b) === 0 && String(a) === String(b);
  const ka = Object.keys(a);
  const kb = Object.keys(b as Document);
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && identical((a as Document)[k], (b as Document)[k]));
}

export function isPlainObject(v: unknown): v is Document {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * A DBRef: `{ $ref: <collection>, $id: <value>, $db?: <database>, ...fields }`. MongoDB stores it as the plain
 * document it is, and so does the engine (the wire decoder turns bson's DBRef objects back into documents), so that
 * `ref.$id` paths, distinct, indexes and equality see its fields.
 */
export function isDbRef(v: unknown): v is Document {
  if (!isPlainObject(v) || typeof v.$ref !== 'string' || !('$id' in v)) return false;
  const keys = Object.keys(v);
  return keys[0] === '$ref' && keys[1] === '$id';
}

/** An operator object (`{ $gt: 1 }`), as against a value to compare with (a DBRef's `$` fields are not operators). */
export const isOperatorObject = (v: unknown): v is Document => isPlainObject(v) && !isDbRef(v) && Object.keys(v).some((k) => k.startsWith('$'));

/** A regular expression, native or BSON. */
export const isRegexValue = (v: unknown): boolean => v instanceof RegExp || (v as { _bsontype?: string })?._bsontype === 'BSONRegExp';

/** Whether `v` holds a string anywhere: strings compare by collation, so an index under another one cannot serve them. */
export const hasStrings = (v: unknown): boolean => typeRank(v) === 4 || (Array.isArray(v) ? v.some(hasStrings) : isPlainObject(v) && Object.values(v).some(hasStrings));

/** Shell-style rendering of a value, as MongoDB prints it in `dup key: { ... }` messages. */
export function formatValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v instanceof Date) return `new Date(${v.getTime()})`;
  if (v instanceof RegExp) return String(v);
  if (Array.isArray(v)) return `[ ${v.map(formatValue).join(', ')} ]`;
  const t = (v as { _bsontype?: string })._bsontype;
  if (t === 'ObjectId') return `ObjectId('${(v as ObjectId).toHexString()}')`;
  if (t === 'Long' || t === 'Decimal128') return String(v);
  if (t === 'Binary') return `BinData(${(v as Binary).sub_type}, ${(v as Binary).toString('hex')})`;
  if (t) return String(v);
  const entries = Object.entries(v as Document).map(([k, x]) => `${k}: ${formatValue(x)}`);
  return entries.length ? `{ ${entries.join(', ')} }` : '{}';
}
