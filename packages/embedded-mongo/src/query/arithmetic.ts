/**
 * Aggregation arithmetic over every BSON number type, as MongoDB computes it: an operation takes the widest type of its
 * operands (int < long < double < decimal), so that any Decimal128 operand makes the result an exact Decimal128 and
 * Longs stay Longs while they fit. mingo knows only JavaScript numbers: it skipped Decimal128 and Long values in `$sum`
 * and `$avg` (0 and null, silently), refused them in `$add` and `$multiply`, and ordered them by their text in `$min`,
 * `$max`, `$sortArray` and `$bucket`. Operations on plain numbers and dates stay mingo's.
 */
import { Decimal128, Long, type Document } from 'bson';
import { evalExpr } from 'mingo/core';
import { Lazy } from 'mingo/lazy';
import type { Options } from 'mingo/types';
import * as accumulatorOperators from 'mingo/operators/accumulator';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import { compareBson, isPlainObject, toNumber, typeRank } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';
import { collatorOf } from './collation.js';
import { decimalArithmetic, type DecimalOp } from './decimal.js';
import { parseSort, sortDocuments } from './sort.js';

const bsonType = (v: unknown) => (v as { _bsontype?: string } | null)?._bsontype;
export const isDecimal = (v: unknown): v is Decimal128 => bsonType(v) === 'Decimal128';
const isLong = (v: unknown): v is Long => bsonType(v) === 'Long';
/** A value mingo cannot compute with: the engine does. */
const isWide = (v: unknown) => isDecimal(v) || isLong(v);
const isNumeric = (v: unknown) => typeRank(v) === 3;

const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;

type Op = '$add' | '$subtract' | '$multiply' | '$divide';
const DECIMAL_OPS: Record<Op, DecimalOp> = { $add: '$inc', $subtract: '$subtract', $multiply: '$mul', $divide: '$divide' };

/** `a op b` for two numbers, one of them a Decimal128 or a Long. */
function combine(op: Op, a: unknown, b: unknown): unknown {
  if (isDecimal(a) || isDecimal(b)) {
    if (op === '$divide' && toNumber(b) === 0) throw new MongoCommandError(16608, "can't $divide by zero");
    return decimalArithmetic(DECIMAL_OPS[op], a, b);
  }
  const integral = (v: unknown) => isLong(v) || (typeof v === 'number' && Number.isInteger(v));
  if (op !== '$divide' && integral(a) && integral(b)) {
    const [x, y] = [BigInt(isLong(a) ? a.toString() : (a as number)), BigInt(isLong(b) ? b.toString() : (b as number))];
    const r = op === '$add' ? x + y : op === '$subtract' ? x - y : x * y;
    if (r >= MIN_LONG && r <= MAX_LONG) return Long.fromBigInt(r);
    return Number(r);
  }
  const [x, y] = [toNumber(a), toNumber(b)];
  if (op === '$divide' && y === 0) throw new MongoCommandError(16608, "can't $divide by zero");
  return op === '$add' ? x + y : op === '$subtract' ? x - y : op === '$multiply' ? x * y : x / y;
}

const literal = (v: unknown) => ({ $literal: v });

/** An arithmetic expression: the engine's when a Decimal128 or Long takes part, mingo's otherwise. */
function arithmetic(op: Op): typeof expressionOperators.$add {
  const base = expressionOperators[op];
  return (obj, expr, options) => {
    const evaluated = evalExpr(obj, expr, options);
    const args = Array.isArray(evaluated) ? evaluated : [evaluated];
    if (!args.some(isWide)) return base(obj, args.map(literal), options);
    if (args.some((v) => v === null || v === undefined)) return null;
    if ((op === '$subtract' || op === '$divide') && args.length !== 2)
      throw new MongoCommandError(16020, `Expression ${op} takes exactly 2 arguments. ${args.length} were passed in.`);
    const date = args.find((v) => v instanceof Date) as Date | undefined;
    if (date && (op === '$add' || (op === '$subtract' && args[0] === date))) {
      // A date moved by a number of milliseconds: the date stays a date.
      const rest = args.filter((v) => v !== date);
      const ms = rest.reduce<number>((sum, v) => sum + toNumber(v), 0);
      return new Date(date.getTime() + Math.round(op === '$add' ? ms : -ms));
    }
    const wrong = args.find((v) => !isNumeric(v));
    if (wrong !== undefined) {
      const codes: Record<Op, number> = { $add: 16554, $subtract: 16556, $multiply: 16555, $divide: 16609 };
      throw new MongoCommandError(codes[op], `${op} only supports numeric types, not ${typeName(wrong)}`);
    }
    return args.slice(1).reduce((acc, v) => combine(op, acc, v), args[0]);
  };
}

const typeName = (v: unknown) => (v instanceof Date ? 'date' : Array.isArray(v) ? 'array' : isPlainObject(v) ? 'object' : typeof v);

/** The values of an accumulator's input (`$push` of its expression; in an expression, the evaluated arguments). */
const valuesOf = (coll: unknown[], expr: unknown, options: Options) => accumulatorOperators.$push(coll as Document[], expr, options) as unknown[];

/** The sum of the numbers of `values` (others are ignored) in the widest type among them. */
function sumOf(values: unknown[]): { sum: unknown; count: number } {
  const numbers = values.filter(isNumeric);
  if (!numbers.some(isWide)) {
    let sum = 0;
    for (const n of numbers) sum += toNumber(n);
    return { sum, count: numbers.length };
  }
  let sum: unknown = 0;
  for (const n of numbers) sum = combine('$add', sum, n);
  return { sum, count: numbers.length };
}

const $sum: typeof accumulatorOperators.$sum = (coll, expr, options) => {
  if (typeof expr === 'number') return coll.length * expr;
  return sumOf(valuesOf(coll, expr, options)).sum as number;
};

const $avg: typeof accumulatorOperators.$avg = (coll, expr, options) => {
  const { sum, count } = sumOf(valuesOf(coll, expr, options));
  if (count === 0) return null;
  if (isDecimal(sum)) return decimalArithmetic('$divide', sum, count) as unknown as number;
  return toNumber(sum) / count;
};

/** `$min` and `$max` in BSON order (numbers of every type by value), nulls and missing values skipped. */
function extreme(sign: 1 | -1): typeof accumulatorOperators.$min {
  return (coll, expr, options) => {
    const collator = collatorOf(options);
    let best: unknown = null;
    for (const v of valuesOf(coll, expr, options)) {
      if (v === null || v === undefined) continue;
      if (best === null || compareBson(v, best, collator) * sign < 0) best = v;
    }
    return best as object | null;
  };
}

/** The numbers among `values` as doubles (every BSON number type). */
const doubles = (values: unknown[]) => values.filter(isNumeric).map(toNumber);

/** `$stdDevPop` and `$stdDevSamp` over numbers of every type (mingo skipped Decimal128 and Long values). */
function stdDev(sample: boolean): typeof accumulatorOperators.$stdDevPop {
  return (coll, expr, options) => {
    const xs = doubles(valuesOf(coll, expr, options));
    if (xs.length === 0 || (sample && xs.length < 2)) return null as unknown as number;
    const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
    return Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - (sample ? 1 : 0)));
  };
}

const PERCENTILE_METHODS = new Set(['approximate', 'discrete', 'continuous']);

/**
 * MongoDB's percentile of sorted doubles: `approximate` and `discrete` answer the value of rank ⌈p·n⌉ (the manual's
 * testScores examples), `continuous` interpolates. mingo sorted the numbers as strings (10 before 9) and interpolated.
 */
function percentileOf(xs: number[], p: number, method: string): number | null {
  if (xs.length === 0) return null;
  if (method === 'continuous') {
    const r = p * (xs.length - 1);
    const lo = Math.floor(r);
    return lo + 1 < xs.length ? xs[lo] + (r - lo) * (xs[lo + 1] - xs[lo]) : xs[lo];
  }
  return xs[Math.max(0, Math.ceil(p * xs.length) - 1)];
}

function percentileArgs(op: string, expr: unknown, withP: boolean): Document {
  if (!isPlainObject(expr) || !('input' in expr) || !('method' in expr) || (withP && !('p' in expr)))
    throw new MongoCommandError(
      40414,
      `BSON field '${op}.${!isPlainObject(expr) || !('input' in expr) ? 'input' : !('method' in expr) ? 'method' : 'p'}' is missing but a required field`,
    );
  if (!PERCENTILE_METHODS.has(expr.method))
    throw new MongoCommandError(2, `Currently only 'approximate', 'discrete' and 'continuous' can be used as percentile 'method'`);
  return expr;
}

const $percentile: typeof accumulatorOperators.$percentile = (coll, expr, options) => {
  const args = percentileArgs('$percentile', expr, true);
  const ps = evalExpr({}, args.p, options);
  if (!Array.isArray(ps) || ps.length === 0 || !ps.every((p) => isNumeric(p) && toNumber(p) >= 0 && toNumber(p) <= 1))
    throw new MongoCommandError(7750301, "The $percentile 'p' field must be an array of numbers from [0.0, 1.0]");
  const xs = doubles(valuesOf(coll, args.input, options)).sort((a, b) => a - b);
  return ps.map((p) => percentileOf(xs, toNumber(p), args.method)) as number[];
};

const $median: typeof accumulatorOperators.$median = (coll, expr, options) => {
  const args = percentileArgs('$median', expr, false);
  return percentileOf(
    doubles(valuesOf(coll, args.input, options)).sort((a, b) => a - b),
    0.5,
    args.method,
  ) as number;
};

/** The expression form (`{ $median: { input: [...], method } }`), which mingo also uses for the accumulator in a group. */
function percentileExpression(accumulator: typeof $median): typeof expressionOperators.$median {
  return (obj, expr, options) => {
    if (Array.isArray(obj)) return accumulator(obj as Document[], expr, options);
    const args: Document = isPlainObject(expr) ? expr : {};
    const input = evalExpr(obj, args.input, options);
    const values = Array.isArray(input) ? input : input === null || input === undefined ? [] : [input];
    return accumulator(values as Document[], { ...args, input: '$$CURRENT' } as Parameters<typeof $median>[1], options);
  };
}

/** Covariance of `[x, y]` pairs as doubles (mingo skipped Long values); Decimal128 pairs are refused (MongoDB: Decimal128). */
function covariance(sample: boolean): typeof accumulatorOperators.$covariancePop {
  const op = sample ? '$covarianceSamp' : '$covariancePop';
  return (coll, expr, options) => {
    const pairs = valuesOf(coll, expr, options).filter((p): p is unknown[] => Array.isArray(p) && p.length === 2 && p.every(isNumeric));
    if (pairs.some((p) => p.some(isDecimal)))
      throw new MongoCommandError(115, `${op} over Decimal128 values is not supported by the embedded engine`);
    const base = sample ? accumulatorOperators.$covarianceSamp : accumulatorOperators.$covariancePop;
    return base(pairs.map((p) => p.map(toNumber)) as unknown as Document[], null, options);
  };
}

export const accumulatorOverrides = {
  $covariancePop: covariance(false),
  $covarianceSamp: covariance(true),
  $sum,
  $avg,
  $min: extreme(1),
  $max: extreme(-1),
  $stdDevPop: stdDev(false),
  $stdDevSamp: stdDev(true),
  $percentile,
  $median,
};

/** `$sortArray` in BSON order: a Decimal128 sorts among the numbers, documents by their fields in order. */
const $sortArray: typeof expressionOperators.$sortArray = (obj, expr, options) => {
  if (!isPlainObject(expr) || !('input' in expr) || !('sortBy' in expr))
    throw new MongoCommandError(2, '$sortArray expects an object with input and sortBy');
  const input = evalExpr(obj, expr.input, options);
  if (input === null || input === undefined) return null;
  if (!Array.isArray(input))
    throw new MongoCommandError(2942504, `The input argument to $sortArray must be an array, but was of type: ${typeName(input)}`);
  const collator = collatorOf(options);
  const sortBy = expr.sortBy;
  if (sortBy === 1 || sortBy === -1) return input.slice().sort((a, b) => compareBson(a, b, collator) * sortBy);
  const spec = parseSort(sortBy);
  if (!spec || !isPlainObject(sortBy)) throw new MongoCommandError(2942505, '$sortArray sortBy must be 1, -1 or a sort specification');
  return sortDocuments(input.slice(), spec, collator);
};

/** `$isNumber`: true for every BSON number type (mingo: JavaScript numbers only). */
const $isNumber: typeof expressionOperators.$isNumber = (obj, expr, options) => isNumeric(evalExpr(obj, expr, options));

/** `$in` (expression): equality by value across number types, in BSON order otherwise. */
const $in: typeof expressionOperators.$in = (obj, expr, options) => {
  if (!Array.isArray(expr) || expr.length !== 2)
    throw new MongoCommandError(16020, `Expression $in takes exactly 2 arguments. ${Array.isArray(expr) ? expr.length : 1} were passed in.`);
  const [value, list] = evalExpr(obj, expr, options) as unknown[];
  if (!Array.isArray(list))
    throw new MongoCommandError(40081, `$in requires an array as a second argument, found: ${list === undefined ? 'missing' : typeName(list)}`);
  const collator = collatorOf(options);
  return list.some((v) => typeRank(v) === typeRank(value ?? null) && compareBson(v, value ?? null, collator) === 0);
};

/**
 * `$toDecimal` answers a Decimal128 (mingo answered a double): an int or long exactly, a double with 15 significant
 * digits as MongoDB converts it (`5.5` is `5.50000000000000`), a string as written, a bool 0 or 1, a date its ms.
 */
const $toDecimal: typeof expressionOperators.$toDecimal = (obj, expr, options) => {
  const v = evalExpr(obj, expr, options);
  if (v === null || v === undefined) return null;
  if (isDecimal(v)) return v as unknown as number;
  if (typeof v === 'boolean') return Decimal128.fromString(v ? '1' : '0') as unknown as number;
  if (v instanceof Date) return Decimal128.fromString(String(v.getTime())) as unknown as number;
  if (typeof v === 'string') {
    try {
      return Decimal128.fromString(v.trim() === v ? v : '') as unknown as number;
    } catch {
      throw new MongoCommandError(241, `Failed to parse number '${v}' in $convert with no onError value`);
    }
  }
  if (!isNumeric(v)) throw new MongoCommandError(241, `Unsupported conversion from ${typeName(v)} to decimal in $convert with no onError value`);
  return decimalArithmetic('$inc', v, 0) as unknown as number;
};

/** `$toString` of a Decimal128 or Long is its digits (mingo refused them); anything else is mingo's. */
const $toString: typeof expressionOperators.$toString = (obj, expr, options) => {
  const v = evalExpr(obj, expr, options);
  return isWide(v) ? String(v) : expressionOperators.$toString(obj, literal(v), options);
};

/** `$convert` to `decimal` answers a Decimal128 (mingo: a double), to `string` the digits of a Decimal128 or Long. */
const $convert: typeof expressionOperators.$convert = (obj, expr, options) => {
  if (!isPlainObject(expr)) return expressionOperators.$convert(obj, expr, options);
  const to = evalExpr(obj, expr.to, options);
  const input = evalExpr(obj, expr.input, options);
  const toDecimal = to === 'decimal' || to === 19;
  if (!toDecimal && !((to === 'string' || to === 2) && isWide(input)))
    return expressionOperators.$convert(obj, { ...expr, input: literal(input) }, options);
  if (input === null || input === undefined) return evalExpr(obj, expr.onNull, options) ?? null;
  try {
    return toDecimal ? $toDecimal(obj, literal(input), options) : String(input);
  } catch (error) {
    if ('onError' in expr) return evalExpr(obj, expr.onError, options);
    throw error;
  }
};

export const expressionArithmetic = {
  $toString,
  $convert,
  $median: percentileExpression($median),
  $percentile: percentileExpression($percentile as unknown as typeof $median),
  $isNumber,
  $in,
  $toDecimal,
  $add: arithmetic('$add'),
  $subtract: arithmetic('$subtract'),
  $multiply: arithmetic('$multiply'),
  $divide: arithmetic('$divide'),
  $sortArray,
} as unknown as Record<string, typeof expressionOperators.$add>;

/**
 * `$bucket` as MongoDB runs it (a `$group` on a `$switch` over the boundaries): boundaries compared in BSON order (a
 * Decimal128 among the numbers), buckets in boundary order with `_id` first, empty buckets left out, a value outside
 * them without `default` an error.
 */
export const $bucket: typeof pipelineOperators.$bucket = (collection, expr, options) => {
  if (!isPlainObject(expr)) throw new MongoCommandError(40201, 'Argument to $bucket stage must be an object');
  const bounds = expr.boundaries as unknown[];
  if (!Array.isArray(bounds) || bounds.length < 2) throw new MongoCommandError(40192, "The $bucket 'boundaries' field must have at least 2 values");
  for (let i = 1; i < bounds.length; i++) {
    if (typeRank(bounds[i]) !== typeRank(bounds[0]))
      throw new MongoCommandError(40193, "All values in the 'boundaries' option to $bucket must have the same type");
    if (compareBson(bounds[i - 1], bounds[i]) >= 0)
      throw new MongoCommandError(40194, "The 'boundaries' option to $bucket must be sorted in ascending order");
  }
  const hasDefault = 'default' in expr;
  const [lower, upper] = [bounds[0], bounds[bounds.length - 1]];
  if (hasDefault && typeRank(expr.default) === typeRank(lower) && compareBson(expr.default, lower) >= 0 && compareBson(expr.default, upper) < 0)
    throw new MongoCommandError(
      40199,
      "The $bucket 'default' field must be less than the lowest boundary or greater than or equal to the highest boundary.",
    );
  const output = (expr.output as Document | undefined) ?? { count: { $sum: 1 } };
  const collator = collatorOf(options);
  return collection.transform((items) => {
    const buckets = new Map<number, Document[]>();
    for (const doc of items as Document[]) {
      const key = evalExpr(doc, expr.groupBy, options);
      let at = -1;
      if (compareBson(key, lower, collator) >= 0 && compareBson(key, upper, collator) < 0 && typeRank(key) === typeRank(lower)) {
        at = 0;
        while (compareBson(key, bounds[at + 1], collator) >= 0) at++;
      } else if (!hasDefault) {
        throw new MongoCommandError(40066, '$switch could not find a matching branch for an input, and no default was specified.');
      }
      const list = buckets.get(at);
      if (list) list.push(doc);
      else buckets.set(at, [doc]);
    }
    const order = [...buckets.keys()].sort((a, b) => (a === -1 ? 1 : b === -1 ? -1 : a - b));
    return Lazy(
      order.map((at) => {
        const docs = buckets.get(at)!;
        const out: Document = { _id: at === -1 ? expr.default : bounds[at] };
        for (const [field, acc] of Object.entries(output)) out[field] = evalExpr(docs, acc, options);
        return out;
      }),
    );
  });
};

/** `$bucketAuto` orders by mingo's comparison, which orders Decimal128 and Long by their text: refused over them. */
export const $bucketAuto: typeof pipelineOperators.$bucketAuto = (collection, expr, options) =>
  collection.transform((items) => {
    if (isPlainObject(expr) && (items as Document[]).some((doc) => isWide(evalExpr(doc, expr.groupBy, options))))
      throw new MongoCommandError(115, '$bucketAuto over Decimal128 or Long values is not supported by the embedded engine');
    return pipelineOperators.$bucketAuto(Lazy(items), expr, options);
  });
