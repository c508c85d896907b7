// Value handling of the unified test format: turning Extended JSON into what the driver should send, and the
// "Evaluating Matches" rules (root-level documents, flexible numerics, the $$ special operators).
import { EJSON } from 'bson';

/** Parses a test file as canonical Extended JSON, so int32, int64 and double values keep their BSON types. */
export const parseTestFile = (text) => EJSON.parse(text, { relaxed: false });

const bsonType = (v) => v?._bsontype;

/**
 * What the driver should send for a parsed value: Int32 becomes a JS number (the driver writes integral numbers as
 * int32 anyway), a non-integral Double a JS number, an integral Double stays a Double (written as double), Long stays.
 */
export function toDriver(value) {
  if (Array.isArray(value)) return value.map(toDriver);
  const t = bsonType(value);
  if (t === 'Int32') return value.value;
  if (t === 'Double') return Number.isInteger(value.value) && !Object.is(value.value, -0) ? value : value.value;
  if (t) return value;
  if (value instanceof Date || value instanceof RegExp || value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [k, v] of Object.entries(value)) out[k] = toDriver(v);
  return out;
}

/** Option values (limit, batchSize, upsert...) as plain JS values. */
export function toOption(value) {
  const t = bsonType(value);
  if (t === 'Int32' || t === 'Double') return value.value;
  if (t === 'Long') return value.toNumber();
  return toDriver(value);
}

const isNumeric = (v) => typeof v === 'number' || typeof v === 'bigint' || ['Int32', 'Double', 'Long'].includes(bsonType(v));
const numeric = (v) => (typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : bsonType(v) === 'Long' ? v.toNumber() : v.value);

const isDocument = (v) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !bsonType(v) && !(v instanceof Date) && !(v instanceof RegExp) && !Buffer.isBuffer(v) && !(v instanceof Uint8Array);

/** The $type names a value can answer to (an integral JS number may have been any numeric BSON type). */
function typeNames(v) {
  if (v === null) return ['null'];
  if (v === undefined) return [];
  if (typeof v === 'number') return Number.isInteger(v) ? ['int', 'long', 'double', 'number'] : ['double', 'number'];
  if (typeof v === 'bigint') return ['long', 'number'];
  if (typeof v === 'string') return ['string'];
  if (typeof v === 'boolean') return ['bool'];
  if (Array.isArray(v)) return ['array'];
  if (v instanceof Date) return ['date'];
  if (v instanceof RegExp) return ['regex'];
  const names = { ObjectId: 'objectId', Binary: 'binData', Long: 'long', Decimal128: 'decimal', Int32: 'int', Double: 'double', Timestamp: 'timestamp', BSONRegExp: 'regex', MinKey: 'minKey', MaxKey: 'maxKey', Code: 'javascript' };
  const t = bsonType(v);
  if (t) return [names[t] ?? t, ...(['int', 'long', 'double', 'decimal'].includes(names[t]) ? ['number'] : [])];
  return ['object'];
}

export const show = (v) => {
  try {
    return EJSON.stringify(v, { relaxed: true });
  } catch {
    return String(v);
  }
};

const toHex = (v) => (Buffer.isBuffer(v) || v instanceof Uint8Array ? Buffer.from(v).toString('hex') : bsonType(v) === 'Binary' ? Buffer.from(v.value()).toString('hex') : null);

function scalarEqual(expected, actual) {
  if (isNumeric(expected) && isNumeric(actual)) return numeric(expected) === numeric(actual) || (Number.isNaN(numeric(expected)) && Number.isNaN(numeric(actual)));
  const te = bsonType(expected);
  if (te === 'Decimal128') return bsonType(actual) === 'Decimal128' && expected.toString() === actual.toString();
  if (te === 'ObjectId') return bsonType(actual) === 'ObjectId' && expected.equals(actual);
  if (te === 'Binary') return bsonType(actual) === 'Binary' && expected.sub_type === actual.sub_type && toHex(expected) === toHex(actual);
  if (te === 'Timestamp') return bsonType(actual) === 'Timestamp' && expected.equals(actual);
  if (te === 'MinKey' || te === 'MaxKey') return bsonType(actual) === te;
  if (te === 'BSONRegExp' || expected instanceof RegExp) {
    const src = (r) => (r instanceof RegExp ? [r.source, r.flags] : [r.pattern, r.options]);
    return actual != null && (actual instanceof RegExp || bsonType(actual) === 'BSONRegExp') && show(src(expected)) === show(src(actual));
  }
  if (te === 'Code') return bsonType(actual) === 'Code' && expected.code === actual.code;
  if (expected instanceof Date) return actual instanceof Date && expected.getTime() === actual.getTime();
  return expected === actual;
}

/**
 * Matches `actual` against `expected`; returns null or the first mismatch as text. `ctx.entities` resolves
 * $$matchesEntity and $$sessionLsid.
 */
export function match(expected, actual, ctx, root = false, path = '') {
  if (isDocument(expected)) {
    const keys = Object.keys(expected);
    if (keys.length === 1 && keys[0].startsWith('$$')) return special(keys[0], expected[keys[0]], actual, ctx, root, path, true);
    if (!isDocument(actual)) return `${path || 'value'}: expected a document, got ${show(actual)}`;
    for (const key of keys) {
      const e = expected[key];
      const sub = `${path}.${key}`;
      if (isDocument(e) && Object.keys(e).length === 1 && Object.keys(e)[0].startsWith('$$')) {
        const op = Object.keys(e)[0];
        if (op === '$$exists') {
          if ((key in actual && actual[key] !== undefined) !== e.$$exists) return `${sub}: expected ${e.$$exists ? 'present' : 'absent'}`;
          continue;
        }
        if (op === '$$unsetOrMatches' && !(key in actual && actual[key] !== undefined)) continue;
      }
      if (!(key in actual) || actual[key] === undefined) return `${sub}: missing (expected ${show(e)})`;
      const r = match(e, actual[key], ctx, false, sub);
      if (r) return r;
    }
    if (!root) {
      const extra = Object.keys(actual).filter((k) => !(k in expected) && actual[k] !== undefined);
      if (extra.length) return `${path || 'value'}: unexpected field(s) ${extra.join(', ')} in ${show(actual)}`;
    }
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path || 'value'}: expected an array, got ${show(actual)}`;
    if (expected.length !== actual.length) return `${path || 'value'}: expected ${expected.length} elements, got ${actual.length}: ${show(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const r = match(expected[i], actual[i], ctx, root, `${path}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  return scalarEqual(expected, actual) ? null : `${path || 'value'}: expected ${show(expected)}, got ${show(actual)}`;
}

function special(op, arg, actual, ctx, root, path) {
  switch (op) {
    case '$$exists':
      return (actual !== undefined) === arg ? null : `${path}: expected ${arg ? 'present' : 'absent'}`;
    case '$$type': {
      const wanted = Array.isArray(arg) ? arg : [arg];
      const names = typeNames(actual);
      return wanted.some((t) => names.includes(t)) ? null : `${path}: expected type ${wanted.join('|')}, got ${show(actual)}`;
    }
    case '$$unsetOrMatches':
      return actual === undefined ? null : match(arg, actual, ctx, root, path);
    case '$$matchesEntity': {
      if (!ctx.entities.has(arg)) throw new Error(`$$matchesEntity: unknown entity ${arg}`);
      return match(ctx.entities.get(arg), actual, ctx, root, path);
    }
    case '$$matchesHexBytes': {
      const hex = toHex(actual) ?? (typeof actual === 'string' ? Buffer.from(actual, 'latin1').toString('hex') : null);
      return hex !== null && hex.toLowerCase() === String(arg).toLowerCase() ? null : `${path}: expected bytes ${arg}, got ${hex}`;
    }
    case '$$sessionLsid': {
      const session = ctx.entities.get(arg);
      if (!session?.id) throw new Error(`$$sessionLsid: unknown session ${arg}`);
      return match(session.id, actual, ctx, false, path);
    }
    case '$$lte':
      return isNumeric(actual) && numeric(actual) <= numeric(arg) ? null : `${path}: expected <= ${show(arg)}, got ${show(actual)}`;
    case '$$matchAsDocument':
      return typeof actual === 'string' ? match(arg, EJSON.parse(actual, { relaxed: false }), ctx, false, path) : `${path}: expected an Extended JSON string`;
    case '$$matchAsRoot':
      return match(arg, actual, ctx, true, path);
    default:
      throw new Error(`unsupported special operator ${op}`);
  }
}

/** Exact comparison for collection contents: like `match`, but extra fields are never allowed. */
export function matchExactly(expected, actual, path = '') {
  if (isDocument(expected)) {
    if (!isDocument(actual)) return `${path || 'document'}: expected a document, got ${show(actual)}`;
    const ek = Object.keys(expected);
    const ak = Object.keys(actual).filter((k) => actual[k] !== undefined);
    if (ek.length !== ak.length || ek.some((k) => !(k in actual))) return `${path || 'document'}: expected ${show(expected)}, got ${show(actual)}`;
    for (const k of ek) {
      const r = matchExactly(expected[k], actual[k], `${path}.${k}`);
      if (r) return r;
    }
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return `${path}: expected ${show(expected)}, got ${show(actual)}`;
    for (let i = 0; i < expected.length; i++) {
      const r = matchExactly(expected[i], actual[i], `${path}[${i}]`);
      if (r) return r;
    }
    return null;
  }
  return scalarEqual(expected, actual) ? null : `${path}: expected ${show(expected)}, got ${show(actual)}`;
}

