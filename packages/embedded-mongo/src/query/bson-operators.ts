/**
 * Corrections to mingo for BSON value classes it does not know (it compares unknown classes by `toString`):
 * - `$type` (query and expression) names BSON types as MongoDB does (objectId, binData, decimal, long, ...);
 * - comparison operators compare numbers across BSON numeric classes (int/double vs Long vs Decimal128), which
 *   MongoDB treats as one type, Binary by length, subtype and bytes, and strings under the query's collation;
 * - `$all` against a non-array field, and the bitwise operators on Binary values.
 */
import { evalExpr } from 'mingo/core';
import * as expressionOperators from 'mingo/operators/expression';
import * as projectionOperators from 'mingo/operators/projection';
import * as queryOperators from 'mingo/operators/query';
import { Query } from 'mingo/query';
import type { Document } from 'bson';
import { compareBson, identical, isPlainObject, typeRank } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { bitwiseOperators } from './bitwise.js';
import { GuardedRegExp, guardedRegex } from './guard.js';
import { collatorOf, type Collator } from './collation.js';
import { pathValues } from './paths.js';

type QueryOp = typeof queryOperators.$eq;

const TYPE_CODES: Record<number, string> = {
  1: 'double', 2: 'string', 3: 'object', 4: 'array', 5: 'binData', 6: 'undefined', 7: 'objectId', 8: 'bool', 9: 'date',
  10: 'null', 11: 'regex', 13: 'javascript', 16: 'int', 17: 'timestamp', 18: 'long', 19: 'decimal', [-1]: 'minKey', 127: 'maxKey',
};
const TYPE_NAMES = new Set([...Object.values(TYPE_CODES), 'number']);

/** The type name a `$type` operand stands for (a code or an alias), undefined when it names none. */
export const typeAlias = (t: unknown): string | undefined => {
  const name = typeof t === 'number' ? TYPE_CODES[t] : t;
  return typeof name === 'string' && TYPE_NAMES.has(name) ? name : undefined;
};

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
    const name = typeAlias(t);
    if (name === undefined) throw badValue(`Unknown type name alias: ${String(t)}`);
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

/**
 * Values compared by the engine rather than mingo: numbers of every BSON class (mingo compares Long and Decimal128 by
 * their strings), Binary (mingo ignores the subtype and orders by bytes, MongoDB by length, subtype, bytes), documents
 * and arrays (mingo ignores the order of a document's fields, MongoDB compares them in order) and, under a collation,
 * strings. Range operators also take dates, ObjectIds, timestamps and booleans, within their type.
 */
const engineCompared = (value: unknown, collator: Collator | null) => {
  const rank = typeRank(value);
  return rank === 3 || rank === 5 || rank === 6 || rank === 7 || (rank === 4 && collator !== null);
};
const RANGE_RANKS = new Set([3, 4, 5, 6, 7, 8, 9, 10, 11]);

/**
 * Values of a path as a comparison operator sees them: the value, or the elements of an array (and arrays of documents
 * along the way). A document or an array is compared with the whole value at the end of the path too.
 */
function comparedValues(obj: unknown, parts: string[], value: unknown): unknown[] {
  const rank = typeRank(value);
  if (rank !== 5 && rank !== 6) return pathValues(obj, parts).values;
  return leafValues(obj, parts).flatMap((v) => (Array.isArray(v) ? [v, ...v] : [v]));
}

const sameValue = (v: unknown, value: unknown, collator: Collator | null) =>
  typeRank(v) === typeRank(value) && (typeRank(value) === 7 ? identical(v, value) : compareBson(v, value, collator) === 0);

/** Equality: mingo's, or the engine's comparison for the values listed above. */
const $eq: QueryOp = (selector, value, options) => {
  const collator = collatorOf(options);
  if (!engineCompared(value, collator)) return queryOperators.$eq(selector, value, options);
  const parts = selector.split('.');
  return (obj) => comparedValues(obj, parts, value).some((v) => sameValue(v, value, collator));
};

/** Range operators: compared by the engine within the value's type (type bracketing), else mingo's. */
function range(base: QueryOp, accept: (cmp: number) => boolean): QueryOp {
  return (selector, value, options) => {
    if (typeRank(value) === 1 || typeRank(value) === 13) {
      // MinKey and MaxKey bound every type (no type bracketing); a missing field compares as null.
      const parts = selector.split('.');
      return (obj) => {
        const values = pathValues(obj, parts).values;
        return (values.length ? values : [null]).some((v) => accept(compareBson(v ?? null, value)));
      };
    }
    if (!RANGE_RANKS.has(typeRank(value))) return base(selector, value, options);
    const collator = collatorOf(options);
    const rank = typeRank(value);
    const parts = selector.split('.');
    return (obj) => comparedValues(obj, parts, value).some((v) => typeRank(v) === rank && accept(compareBson(v, value, collator)));
  };
}

/**
 * `$regex` with the guarded regex of its pattern (guard.ts): mingo hands operators its own copy of a filter's regex,
 * a plain RegExp, each time it compiles the filter.
 */
const guarded = (v: unknown) => (v instanceof RegExp && !(v instanceof GuardedRegExp) ? guardedRegex(v.source, v.flags) : v);

const $regex: QueryOp = (selector, value, options) => queryOperators.$regex(selector, guarded(value) as RegExp, options);

const $in: QueryOp = (selector, list, options) => {
  if (!Array.isArray(list)) throw badValue('$in needs an array');
  const values = list.map(guarded);
  const collator = collatorOf(options);
  const ours = values.filter((v) => engineCompared(v, collator));
  if (ours.length === 0) return queryOperators.$in(selector, values, options);
  const rest = values.filter((v) => !engineCompared(v, collator));
  const base = rest.length ? queryOperators.$in(selector, rest, options) : () => false;
  const parts = selector.split('.');
  const composite = (v: unknown) => typeRank(v) === 5 || typeRank(v) === 6;
  return (obj) => {
    if (base(obj)) return true;
    // Each kind of candidate list is read once per document, however many values the list holds.
    let scalars: unknown[] | undefined;
    let composites: unknown[] | undefined;
    return ours.some((value) => {
      const candidates = composite(value) ? (composites ??= comparedValues(obj, parts, value)) : (scalars ??= pathValues(obj, parts).values);
      return candidates.some((v) => sameValue(v, value, collator));
    });
  };
};

/** `$all`: every listed value (or `$elemMatch`) matches, also against a field that is not an array (MongoDB's `$and` of `$eq`s). */
const $all: QueryOp = (selector, values, options) => {
  if (!Array.isArray(values)) throw badValue('$all needs an array');
  const predicates = values.map((v) => {
    if (isPlainObject(v) && Object.keys(v)[0] === '$elemMatch') return $elemMatch(selector, v.$elemMatch, options);
    if (v instanceof RegExp) return $regex(selector, v, options);
    return $eq(selector, v, options);
  });
  return (obj) => predicates.length > 0 && predicates.every((p) => p(obj));
};

const DBREF_FIELDS = new Set(['$ref', '$id', '$db']);
/** A DBRef field under a name mingo reads as a field (no BSON field name holds a NUL). */
const dbRefAlias = (k: string) => (DBREF_FIELDS.has(k) ? `\0${k.slice(1)}` : k);

function withDbRefAliases(doc: Document): Document {
  const out: Document = {};
  for (const k of Object.keys(doc)) out[dbRefAlias(k)] = doc[k];
  return out;
}

/**
 * `$elemMatch` whose criteria name a DBRef's `$ref`, `$id` or `$db` (`{ $elemMatch: { $ref: 'users', $id: id } }`,
 * as Mongoose sends for an array of DBRefs, gh-8577): MongoDB reads them as field names, mingo as unknown operators.
 * They are renamed on both sides; anything else is mingo's `$elemMatch`.
 */
const $elemMatch: QueryOp = (selector, criteria, options) => {
  if (!isPlainObject(criteria) || !Object.keys(criteria).some((k) => DBREF_FIELDS.has(k))) return queryOperators.$elemMatch(selector, criteria as Document, options);
  const query = new Query(withDbRefAliases(criteria), options as never);
  const parts = selector.split('.');
  return (obj) => leafValues(obj, parts).some((v) => Array.isArray(v) && v.some((el) => isPlainObject(el) && query.test(withDbRefAliases(el))));
};

const negate =
  (op: QueryOp): QueryOp =>
  (selector, value, options) => {
    const p = op(selector, value, options);
    return (obj) => !p(obj);
  };

type ProjectionOp = typeof projectionOperators.$elemMatch;

const QUERY_LEVEL = new Set(['$and', '$or', '$nor', '$expr', '$where', '$jsonSchema', '$comment', '$text']);

/**
 * `$elemMatch` in a projection: the first matching element. Criteria made only of operators (`{ $gt: 4 }`) apply to
 * the element itself, as in the query operator; mingo would read them as top-level query operators.
 */
const $elemMatchProjection: ProjectionOp = (obj, expr, field, options) => {
  const arr = (obj as Document)[field];
  if (!Array.isArray(arr) || !isPlainObject(expr)) return undefined;
  const keys = Object.keys(expr);
  const onElement = keys.length > 0 && keys.every((k) => k.startsWith('$') && !QUERY_LEVEL.has(k));
  const query = new Query(onElement ? { v: expr } : expr, options as never);
  const found = arr.find((el) => (onElement ? query.test({ v: el }) : isPlainObject(el) && query.test(el)));
  return found === undefined ? undefined : [found];
};

export const projectionOverrides = { $elemMatch: $elemMatchProjection };

const $typeExpression: typeof expressionOperators.$type = (obj, expr, options) => bsonTypeName(evalExpr(obj, expr, options));

type ExpressionOp = typeof expressionOperators.$eq;

/** Expression comparison: BSON order under the collation, a missing value below every other (null included). */
const compareValues = (a: unknown, b: unknown, collator: Collator | null) =>
  a === undefined ? (b === undefined ? 0 : -1) : b === undefined ? 1 : compareBson(a, b, collator);

/**
 * `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte`, `$cmp` in expressions compare two values in BSON order (an array is a
 * value, not a set of candidates as in a query) and strings under the collation; mingo's use query semantics.
 */
function comparison(name: string, result: (cmp: number) => unknown): ExpressionOp {
  return (obj, expr, options) => {
    if (!Array.isArray(expr) || expr.length !== 2) throw new MongoCommandError(16020, `Expression ${name} takes exactly 2 arguments. ${Array.isArray(expr) ? expr.length : 1} were passed in.`);
    const [a, b] = evalExpr(obj, expr, options) as unknown[];
    return result(compareValues(a, b, collatorOf(options))) as boolean;
  };
}

export const queryOverrides = {
  $type: $typeQuery,
  $eq,
  $ne: negate($eq),
  $in,
  $nin: negate($in),
  $regex,
  $all,
  $elemMatch,
  ...bitwiseOperators,
  $gt: range(queryOperators.$gt, (c) => c > 0),
  $gte: range(queryOperators.$gte, (c) => c >= 0),
  $lt: range(queryOperators.$lt, (c) => c < 0),
  $lte: range(queryOperators.$lte, (c) => c <= 0),
};

export const expressionOverrides = {
  $type: $typeExpression,
  $eq: comparison('$eq', (c) => c === 0),
  $ne: comparison('$ne', (c) => c !== 0),
  $gt: comparison('$gt', (c) => c > 0),
  $gte: comparison('$gte', (c) => c >= 0),
  $lt: comparison('$lt', (c) => c < 0),
  $lte: comparison('$lte', (c) => c <= 0),
  $cmp: comparison('$cmp', (c) => Math.sign(c)),
};
