/**
 * Corrections to mingo for BSON value classes it does not know (it compares unknown classes by `toString`):
 * - `$type` (query and expression) names BSON types as MongoDB does (objectId, binData, decimal, long, ...);
 * - comparison operators also compare numbers across BSON numeric classes (int/double vs Long vs Decimal128),
 *   which MongoDB treats as one type.
 */
import { evalExpr } from 'mingo/core';
import * as expressionOperators from 'mingo/operators/expression';
import * as queryOperators from 'mingo/operators/query';
import { compareBson, isPlainObject, typeRank } from '../bson-values.js';
import { badValue } from '../errors.js';
import { pathValues } from './paths.js';

type QueryOp = typeof queryOperators.$eq;

const TYPE_CODES: Record<number, string> = {
  1: 'double', 2: 'string', 3: 'object', 4: 'array', 5: 'binData', 6: 'undefined', 7: 'objectId', 8: 'bool', 9: 'date',
  10: 'null', 11: 'regex', 13: 'javascript', 16: 'int', 17: 'timestamp', 18: 'long', 19: 'decimal', [-1]: 'minKey', 127: 'maxKey',
};
const TYPE_NAMES = new Set([...Object.values(TYPE_CODES), 'number']);

/** MongoDB's name for the BSON type of a value (JS numbers are int when they fit in int32, else double). */
export function bsonTypeName(v: unknown): string {
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  switch (typeof v) {
    case 'number':
      return Number.isInteger(v) && v >= -2147483648 && v <= 2147483647 ? 'int' : 'double';
    case 'string':
      return 'string';
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'long';
  }
  if (Array.isArray(v)) return 'array';
  if (v instanceof Date) return 'date';
  if (v instanceof RegExp) return 'regex';
  if (v instanceof Uint8Array) return 'binData';
  const t = (v as { _bsontype?: string })._bsontype;
  const names: Record<string, string> = {
    ObjectId: 'objectId', Binary: 'binData', Long: 'long', Decimal128: 'decimal', Int32: 'int', Double: 'double',
    Timestamp: 'timestamp', BSONRegExp: 'regex', MinKey: 'minKey', MaxKey: 'maxKey', Code: 'javascript', BSONSymbol: 'symbol',
  };
  return t ? (names[t] ?? 'object') : 'object';
}

function typeMatches(v: unknown, wanted: string): boolean {
  const name = bsonTypeName(v);
  if (wanted === 'number') return ['int', 'long', 'double', 'decimal'].includes(name);
  return name === wanted;
}

const $typeQuery: QueryOp = (selector, value) => {
  const wanted = (Array.isArray(value) ? value : [value]).map((t) => {
    const name = typeof t === 'number' ? TYPE_CODES[t] : t;
    if (typeof name !== 'string' || !TYPE_NAMES.has(name)) throw badValue(`Unknown type name alias: ${String(t)}`);
    return name;
  });
  const parts = selector.split('.');
  return (obj) => {
    // An array field matches 'array' itself, and any other type through its elements.
    const whole = leafValues(obj, parts);
    return whole.some((v) => wanted.some((t) => typeMatches(v, t) || (Array.isArray(v) && v.some((el) => typeMatches(el, t)))));
  };
};

/** Values at the end of a path, arrays at the end kept whole (arrays along the way are traversed). */
function leafValues(doc: unknown, parts: string[], depth = 0, out: unknown[] = []): unknown[] {
  if (depth === parts.length) {
    if (doc !== undefined) out.push(doc);
    return out;
  }
  if (Array.isArray(doc)) {
    if (/^\d+$/.test(parts[depth])) leafValues(doc[Number(parts[depth])], parts, depth + 1, out);
    for (const el of doc) if (isPlainObject(el)) leafValues(el, parts, depth, out);
  } else if (isPlainObject(doc)) {
    leafValues(doc[parts[depth]], parts, depth + 1, out);
  }
  return out;
}

const isBsonNumber = (v: unknown) => typeof v === 'object' && v !== null && typeRank(v) === 3;

/** Equality: mingo's, plus numeric equality when either side is a BSON numeric class (Long(5) equals 5). */
const $eq: QueryOp = (selector, value, options) => {
  const predicate = queryOperators.$eq(selector, value, options);
  if (typeRank(value) !== 3) return predicate;
  const parts = selector.split('.');
  return (obj) =>
    predicate(obj) || pathValues(obj, parts).values.some((v) => typeRank(v) === 3 && (isBsonNumber(v) || isBsonNumber(value)) && compareBson(v, value) === 0);
};

/**
 * Range operators against a number: all numeric BSON classes compare numerically (mingo would compare Long and
 * Decimal128 by their strings). Against other types mingo's operator applies.
 */
function range(base: QueryOp, accept: (cmp: number) => boolean): QueryOp {
  return (selector, value, options) => {
    if (typeRank(value) !== 3) return base(selector, value, options);
    const parts = selector.split('.');
    return (obj) => pathValues(obj, parts).values.some((v) => typeRank(v) === 3 && accept(compareBson(v, value)));
  };
}

const $in: QueryOp = (selector, values, options) => {
  if (!Array.isArray(values)) throw badValue('$in needs an array');
  const base = queryOperators.$in(selector, values, options);
  const numeric = values.filter((v) => typeRank(v) === 3);
  if (numeric.length === 0) return base;
  const eqs = numeric.map((v) => $eq(selector, v, options));
  return (obj) => base(obj) || eqs.some((p) => p(obj));
};

const negate =
  (op: QueryOp): QueryOp =>
  (selector, value, options) => {
    const p = op(selector, value, options);
    return (obj) => !p(obj);
  };

const $typeExpression: typeof expressionOperators.$type = (obj, expr, options) => bsonTypeName(evalExpr(obj, expr, options));

export const queryOverrides = {
  $type: $typeQuery,
  $eq,
  $ne: negate($eq),
  $in,
  $nin: negate($in),
  $gt: range(queryOperators.$gt, (c) => c > 0),
  $gte: range(queryOperators.$gte, (c) => c >= 0),
  $lt: range(queryOperators.$lt, (c) => c < 0),
  $lte: range(queryOperators.$lte, (c) => c <= 0),
};

export const expressionOverrides = { $type: $typeExpression };
