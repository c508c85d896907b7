/**
 * `$top`, `$bottom`, `$topN`, `$bottomN`, `$firstN`, `$lastN`, `$maxN` and `$minN`, as MongoDB answers them: `$top` and
 * `$bottom` give one output (mingo gave a one-element list, so an array `output` came wrapped in an extra array),
 * sorts and comparisons in BSON order (a Decimal128 among the numbers). The `N` operators are also array expressions
 * (`{ $maxN: { input: [...], n } }`), which mingo routes to its own accumulators, so both forms are replaced.
 */
import type { Document } from 'bson';
import { evalExpr } from 'mingo/core';
import type { Options } from 'mingo/types';
import * as accumulatorOperators from 'mingo/operators/accumulator';
import { compareBson, isPlainObject, toNumber, typeRank } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';
import { collatorOf } from './collation.js';
import { parseSort, sortDocuments } from './sort.js';

type Accumulator = (coll: Document[], expr: unknown, options: Options) => unknown;

/** mingo's options carry the group's `_id` as `local.groupId`: `n` may refer to it. */
const groupIdOf = (options: Options) => (options as { local?: { groupId?: unknown } }).local?.groupId;

/** `n`, evaluated against the group's `_id` (mingo evaluated it against the group's documents). */
function nOf(op: string, expr: Document, options: Options): number {
  const plain = (options as { options?: Options }).options ?? options;
  const value = evalExpr(groupIdOf(options) as object, expr.n, plain);
  if (typeRank(value) !== 3 || !Number.isInteger(toNumber(value)))
    throw new MongoCommandError(5787902, `Value for 'n' must be of integral type, but found ${JSON.stringify(value)}`);
  const n = toNumber(value);
  if (n < 1) throw new MongoCommandError(5787908, `${op} 'n' must be greater than 0, found ${n}`);
  return n;
}

function argsOf(op: string, expr: unknown, fields: string[]): Document {
  if (!isPlainObject(expr)) throw new MongoCommandError(5787801, `specification must be an object; found ${JSON.stringify(expr)}`);
  for (const f of fields) if (!(f in expr)) throw new MongoCommandError(5788003, `Missing value for '${f}'`);
  for (const f of Object.keys(expr)) if (!fields.includes(f)) throw new MongoCommandError(5787901, `Unknown argument for '${op}': ${f}`);
  return expr;
}

const push = (docs: Document[], expr: unknown, options: Options) => accumulatorOperators.$push(docs, expr, options) as unknown[];

/** The documents in `sortBy` order (stable, BSON order under the collation). */
function sorted(op: string, coll: Document[], sortBy: unknown, options: Options): Document[] {
  const spec = isPlainObject(sortBy) ? parseSort(sortBy) : null;
  if (!spec) throw new MongoCommandError(5788005, `${op} requires a sortBy document`);
  return sortDocuments(coll.slice(), spec, collatorOf(options));
}

function topBottom(op: string, bottom: boolean, single: boolean): Accumulator {
  return (coll, expr, options) => {
    const args = argsOf(op, expr, single ? ['sortBy', 'output'] : ['n', 'sortBy', 'output']);
    const n = single ? 1 : nOf(op, args, options);
    const docs = sorted(op, coll, args.sortBy, options);
    const picked = bottom ? docs.slice(Math.max(0, docs.length - n)) : docs.slice(0, n);
    const outputs = push(picked, args.output, options);
    return single ? (outputs[0] ?? null) : outputs;
  };
}

function firstLast(op: string, last: boolean): Accumulator {
  return (coll, expr, options) => {
    const args = argsOf(op, expr, ['input', 'n']);
    const n = nOf(op, args, options);
    const values = push(coll, args.input, options);
    return last ? values.slice(Math.max(0, values.length - n)) : values.slice(0, n);
  };
}

/** `$maxN` (largest first) and `$minN` (smallest first), nulls and missing values left out. */
function maxMin(op: string, sign: 1 | -1): Accumulator {
  return (coll, expr, options) => {
    const args = argsOf(op, expr, ['input', 'n']);
    const n = nOf(op, args, options);
    const collator = collatorOf(options);
    const values = push(coll, args.input, options).filter((v) => v !== null && v !== undefined);
    return values.sort((a, b) => compareBson(a, b, collator) * -sign).slice(0, n);
  };
}

const ACCUMULATORS = {
  $top: topBottom('$top', false, true),
  $bottom: topBottom('$bottom', true, true),
  $topN: topBottom('$topN', false, false),
  $bottomN: topBottom('$bottomN', true, false),
  $firstN: firstLast('$firstN', false),
  $lastN: firstLast('$lastN', true),
  $maxN: maxMin('$maxN', 1),
  $minN: maxMin('$minN', -1),
};

export const nAccumulators = ACCUMULATORS as unknown as Record<keyof typeof ACCUMULATORS, typeof accumulatorOperators.$push>;

/** The array-expression form of an `N` operator: over the evaluated `input` array (or, in a group, the group). */
function arrayForm(op: '$firstN' | '$lastN' | '$maxN' | '$minN') {
  const accumulator = ACCUMULATORS[op];
  return (obj: object, expr: unknown, options: Options) => {
    if (Array.isArray(obj)) return accumulator(obj as Document[], expr, options);
    const args = argsOf(op, expr, ['input', 'n']);
    const input = evalExpr(obj, args.input, options);
    const n = evalExpr(obj, args.n, options);
    if (input === null || input === undefined) return null;
    if (!Array.isArray(input)) throw new MongoCommandError(5788200, `Input must be an array`);
    return accumulator(input as Document[], { input: '$$CURRENT', n: { $literal: n } }, options);
  };
}

export const nExpressions = { $firstN: arrayForm('$firstN'), $lastN: arrayForm('$lastN'), $maxN: arrayForm('$maxN'), $minN: arrayForm('$minN') };
