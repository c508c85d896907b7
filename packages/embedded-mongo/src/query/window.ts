/**
 * `$setWindowFields`, as MongoDB runs it: documents sorted by their partition then `sortBy` (so the output comes
 * partition by partition, in partition order), each output field computed over its window: `documents` bounds by
 * position, `range` bounds by the `sortBy` value (`unit` for dates; descending `sortBy` counts bounds the other way),
 * `current` in a range meaning the current value, ties included. Accumulators are the context's own (Decimal128 aware);
 * the window-only operators are computed here. mingo's stage runs each value through a JavaScript `$function`, which
 * the engine refuses, and reads only top-level sort fields.
 */
import type { Document } from 'bson';
import { Lazy } from 'mingo/lazy';
import { evalExpr } from 'mingo/core';
import type { Options } from 'mingo/types';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import { compareBson, isPlainObject, toNumber, typeRank } from '../bson-values.js';
import { failedToParse, MongoCommandError } from '../errors.js';
import { isDecimal } from './arithmetic.js';
import { collatorOf } from './collation.js';
import { parseSort, sortValue, type SortSpec } from './sort.js';

type Bound = number | 'current' | 'unbounded';

interface WindowSpec {
  kind: 'documents' | 'range';
  lower: Bound;
  upper: Bound;
  unit?: string;
}

interface OutputSpec {
  field: string;
  op: string;
  args: unknown;
  window: WindowSpec | null;
}

/** Operators computed here (MongoDB's window-only ones); the accumulators below work over a window too. */
const WINDOW_ONLY = new Set([
  '$rank',
  '$denseRank',
  '$documentNumber',
  '$shift',
  '$derivative',
  '$integral',
  '$expMovingAvg',
  '$linearFill',
  '$locf',
  '$minMaxScaler',
]);
/** The accumulators MongoDB takes as window functions (not `$mergeObjects`, `$accumulator`). */
const WINDOW_ACCUMULATORS = new Set([
  '$addToSet',
  '$avg',
  '$bottom',
  '$bottomN',
  '$count',
  '$covariancePop',
  '$covarianceSamp',
  '$first',
  '$firstN',
  '$last',
  '$lastN',
  '$max',
  '$maxN',
  '$median',
  '$min',
  '$minN',
  '$percentile',
  '$push',
  '$stdDevPop',
  '$stdDevSamp',
  '$sum',
  '$top',
  '$topN',
]);
/** They need a `sortBy`; and these take no explicit window. */
const NEEDS_SORT = new Set(['$rank', '$denseRank', '$documentNumber', '$shift', '$derivative', '$integral', '$expMovingAvg', '$linearFill']);
const NO_WINDOW = new Set(['$rank', '$denseRank', '$documentNumber', '$shift', '$expMovingAvg', '$linearFill', '$locf']);
const UNITS: Record<string, number> = { week: 604800000, day: 86400000, hour: 3600000, minute: 60000, second: 1000, millisecond: 1 };
const DATE_UNITS = new Set([...Object.keys(UNITS), 'year', 'quarter', 'month']);

function parseBound(v: unknown, kind: 'documents' | 'range'): Bound {
  if (v === 'current' || v === 'unbounded') return v;
  if (typeRank(v) === 3) {
    const n = toNumber(v);
    if (kind === 'documents' && !Number.isInteger(n)) throw failedToParse('Numeric document-based bounds must be an integer');
    return n;
  }
  throw failedToParse(`Window bounds must be 'unbounded', 'current', or a number`);
}

function parseWindow(window: unknown): WindowSpec | null {
  if (window === undefined) return null;
  if (!isPlainObject(window)) throw failedToParse("'window' field must be an object");
  const kind = 'documents' in window ? 'documents' : 'range' in window ? 'range' : null;
  if ('documents' in window && 'range' in window) throw failedToParse("Window bounds can specify either 'documents' or 'unit', not both");
  if (!kind) {
    if ('unit' in window) throw failedToParse("Window bounds can only specify 'unit' with range-based bounds");
    return null;
  }
  const bounds = window[kind];
  if (!Array.isArray(bounds) || bounds.length !== 2) throw failedToParse(`Window bounds must be a 2-element array: ${kind}`);
  const spec: WindowSpec = { kind, lower: parseBound(bounds[0], kind), upper: parseBound(bounds[1], kind) };
  if ('unit' in window) {
    if (kind !== 'range') throw failedToParse("Window bounds can only specify 'unit' with range-based bounds");
    if (!DATE_UNITS.has(window.unit)) throw failedToParse(`unknown time unit value: ${String(window.unit)}`);
    spec.unit = window.unit;
  }
  const order = (b: Bound) => (b === 'unbounded' ? null : b === 'current' ? 0 : b);
  const [lo, hi] = [order(spec.lower), order(spec.upper)];
  if (lo !== null && hi !== null && lo > hi) throw failedToParse('Lower bound must not exceed upper bound');
  return spec;
}

function parseOutputs(output: unknown, options: Options): OutputSpec[] {
  if (!isPlainObject(output)) throw new MongoCommandError(14, "$setWindowFields 'output' field must be an object");
  return Object.entries(output).map(([field, spec]) => {
    if (!isPlainObject(spec)) throw failedToParse(`$setWindowFields output field '${field}' must be an object`);
    const ops = Object.keys(spec).filter((k) => k !== 'window');
    if (ops.length !== 1 || !ops[0].startsWith('$')) throw failedToParse('Expected a single window function in an output field of $setWindowFields');
    const op = ops[0];
    if (!WINDOW_ONLY.has(op) && !(WINDOW_ACCUMULATORS.has(op) && options.context.getOperator('accumulator' as never, op)))
      throw failedToParse(`Unrecognized window function, ${op}`);
    const window = parseWindow(spec.window);
    if (window && NO_WINDOW.has(op)) throw failedToParse(`${op} does not accept a 'window' field`);
    return { field, op, args: spec[op], window };
  });
}

interface Row {
  doc: Document;
  key: unknown;
  sort: unknown[];
}

/** The stage. */
export const $setWindowFields: typeof pipelineOperators.$addFields = (collection, expr, options) => {
  if (!isPlainObject(expr)) throw failedToParse('the $setWindowFields stage specification must be an object');
  for (const k of Object.keys(expr))
    if (!['partitionBy', 'sortBy', 'output'].includes(k))
      throw new MongoCommandError(40415, `BSON field '$setWindowFields.${k}' is an unknown field.`);
  if (expr.output === undefined) throw new MongoCommandError(40414, "BSON field '$setWindowFields.output' is missing but a required field");
  if (isPlainObject(expr.partitionBy) && Object.keys(expr.partitionBy).length === 0)
    throw failedToParse('An empty object is not a valid partitionBy expression');
  const outputs = parseOutputs(expr.output, options);
  const sort = expr.sortBy === undefined ? null : parseSort(expr.sortBy);
  for (const o of outputs) {
    const bounded = o.window && !(o.window.lower === 'unbounded' && o.window.upper === 'unbounded');
    if ((NEEDS_SORT.has(o.op) || bounded) && !sort) throw failedToParse(`${o.op} requires a sortBy`);
    const single = ['$rank', '$denseRank', '$shift', '$derivative', '$integral', '$linearFill'].includes(o.op) || o.window?.kind === 'range';
    if (single && sort && sort.keys.length !== 1)
      throw new MongoCommandError(5339902, `${o.window?.kind === 'range' ? 'Range-based window' : o.op} requires a sortBy with exactly one field`);
    if ((o.op === '$derivative' || o.op === '$integral') && !isPlainObject(o.args)) throw failedToParse(`${o.op} expects an object with 'input'`);
    if (o.op === '$derivative' && !o.window) throw failedToParse('$derivative requires explicit window bounds');
  }
  const collator = collatorOf(options);
  return collection.transform((items) => {
    const rows: Row[] = (items as Document[]).map((doc) => ({
      doc,
      key: expr.partitionBy === undefined ? null : (evalExpr(doc, expr.partitionBy, options) ?? null),
      sort: sort ? sort.keys.map((k) => sortValue(doc, k, collator)) : [],
    }));
    const ordered = rows
      .map((row, seq) => ({ row, seq }))
      .sort((a, b) => {
        const r = compareBson(a.row.key, b.row.key, collator);
        if (r !== 0) return r;
        if (sort) {
          for (let i = 0; i < sort.keys.length; i++) {
            const c = compareBson(a.row.sort[i], b.row.sort[i], collator);
            if (c !== 0) return c * sort.keys[i].dir;
          }
        }
        return a.seq - b.seq;
      })
      .map((x) => x.row);
    const out: Document[] = [];
    for (let start = 0; start < ordered.length;) {
      let end = start + 1;
      while (end < ordered.length && compareBson(ordered[end].key, ordered[start].key, collator) === 0) end++;
      const partition = ordered.slice(start, end);
      const values = outputs.map((o) => computeField(partition, o, sort, options));
      partition.forEach((row, i) => {
        const fields: Document = {};
        outputs.forEach((o, f) => (fields[o.field] = { $literal: values[f][i] }));
        out.push(pipelineOperators.$addFields(Lazy([row.doc]), fields, options).collect<Document>()[0]);
      });
      start = end;
    }
    return Lazy(out);
  });
};

/** Window operators the engine computes in doubles: MongoDB answers a Decimal128 over Decimal128 input, so that is refused. */
const IN_DOUBLES = new Set(['$derivative', '$integral', '$expMovingAvg', '$linearFill', '$minMaxScaler']);

/** The value of one output field for every document of a (sorted) partition. */
function computeField(rows: Row[], o: OutputSpec, sort: SortSpec | null, options: Options): unknown[] {
  const docs = rows.map((r) => r.doc);
  if (IN_DOUBLES.has(o.op)) {
    const input = isPlainObject(o.args) && 'input' in o.args ? o.args.input : o.args;
    if (docs.some((doc) => isDecimal(evalExpr(doc, input, options))))
      throw new MongoCommandError(115, `${o.op} over Decimal128 values is not supported by the embedded engine`);
  }
  const sortKey = (i: number) => rows[i].sort[0];
  switch (o.op) {
    case '$documentNumber':
      return rows.map((_, i) => i + 1);
    case '$rank':
    case '$denseRank': {
      const out: number[] = [];
      let dense = 0;
      rows.forEach((row, i) => {
        const tie = i > 0 && rows[i - 1].sort.every((v, k) => compareBson(v, row.sort[k]) === 0);
        if (!tie) dense++;
        out.push(o.op === '$denseRank' ? dense : tie ? out[i - 1] : i + 1);
      });
      return out;
    }
    case '$shift': {
      const args = o.args as Document;
      if (!isPlainObject(args) || !('output' in args) || !('by' in args)) throw failedToParse("$shift requires 'output' and 'by' fields");
      const by = toNumber(args.by);
      if (!Number.isInteger(by)) throw failedToParse("'$shift:by' field must be an integer");
      return docs.map((doc, i) => {
        const j = i + by;
        if (j < 0 || j >= docs.length) return args.default === undefined ? null : evalExpr(doc, args.default, options);
        return evalExpr(docs[j], args.output, options) ?? null;
      });
    }
    case '$locf': {
      let last: unknown = null;
      return docs.map((doc) => {
        const v = evalExpr(doc, o.args, options);
        if (v !== null && v !== undefined) last = v;
        return last;
      });
    }
    case '$linearFill': {
      const ys = docs.map((doc) => evalExpr(doc, o.args, options));
      const xs = rows.map((_, i) => numericSortValue(sortKey(i), sortKey(i) instanceof Date ? 'millisecond' : undefined));
      return ys.map((y, i) => {
        if (y !== null && y !== undefined) return y;
        let p = i - 1;
        while (p >= 0 && (ys[p] === null || ys[p] === undefined)) p--;
        let n = i + 1;
        while (n < ys.length && (ys[n] === null || ys[n] === undefined)) n++;
        if (p < 0 || n >= ys.length) return null;
        const [y0, y1] = [toNumber(ys[p]), toNumber(ys[n])];
        return y0 + ((y1 - y0) * (xs[i] - xs[p])) / (xs[n] - xs[p]);
      });
    }
    case '$expMovingAvg': {
      const args = o.args as Document;
      if (!isPlainObject(args) || 'N' in args === 'alpha' in args) throw failedToParse("$expMovingAvg requires exactly one of 'N' and 'alpha'");
      const alpha = 'N' in args ? 2 / (toNumber(args.N) + 1) : toNumber(args.alpha);
      let avg: number | null = null;
      return docs.map((doc) => {
        const v = evalExpr(doc, args.input, options);
        if (typeRank(v) !== 3) return null;
        const x = toNumber(v);
        avg = avg === null ? x : alpha * x + (1 - alpha) * avg;
        return avg;
      });
    }
  }
  const windows = rows.map((_, i) => windowOf(rows, i, o.window, sort, options));
  switch (o.op) {
    case '$derivative':
    case '$integral': {
      const args = o.args as Document;
      const unit = args.unit === undefined ? undefined : String(args.unit);
      if (unit !== undefined && !UNITS[unit]) throw failedToParse(`${o.op} with unit '${unit}' is not supported: use a unit of week or smaller`);
      return windows.map(([lo, hi]) => {
        const points: [number, number][] = [];
        for (let j = lo; j < hi; j++) {
          const y = evalExpr(docs[j], args.input, options);
          if (typeRank(y) !== 3) continue;
          points.push([numericSortValue(sortKey(j), unit), toNumber(y)]);
        }
        if (o.op === '$derivative') {
          if (hi - lo < 2 || points.length < 2) return null;
          const [[x1, y1], [x2, y2]] = [points[0], points[points.length - 1]];
          return (y2 - y1) / (x2 - x1);
        }
        let area = 0;
        for (let k = 1; k < points.length; k++) area += ((points[k][1] + points[k - 1][1]) / 2) * (points[k][0] - points[k - 1][0]);
        return area;
      });
    }
    case '$minMaxScaler': {
      const args = isPlainObject(o.args) && 'input' in o.args ? (o.args as Document) : { input: o.args };
      const [min, max] = [args.min ?? 0, args.max ?? 1].map(toNumber);
      return windows.map(([lo, hi], i) => {
        const xs = docs.slice(lo, hi).map((d) => toNumber(evalExpr(d, args.input, options)));
        const [wmin, wmax] = [Math.min(...xs), Math.max(...xs)];
        const x = toNumber(evalExpr(docs[i], args.input, options));
        return wmax === wmin ? min : ((x - wmin) / (wmax - wmin)) * (max - min) + min;
      });
    }
  }
  const accumulator = options.context.getOperator('accumulator' as never, o.op) as unknown as (
    docs: Document[],
    args: unknown,
    options: Options,
  ) => unknown;
  return windows.map(([lo, hi]) => {
    const value = accumulator(docs.slice(lo, hi), o.args, options);
    return value === undefined ? null : value;
  });
}

/** A sort value as a number for `$derivative`/`$integral`/`$linearFill`: a date (in `unit`s, or ms), or a number. */
function numericSortValue(v: unknown, unit: string | undefined): number {
  if (v instanceof Date) {
    if (unit === undefined) throw new MongoCommandError(5429513, "Expected a 'unit' with a sortBy field that is a date");
    return v.getTime() / UNITS[unit];
  }
  if (unit !== undefined) throw new MongoCommandError(5429513, `Expected the sortBy field to be a Date, but it was ${typeof v}`);
  if (typeRank(v) !== 3) throw new MongoCommandError(5429414, 'Invalid range: Expected the sortBy field to be a number');
  return toNumber(v);
}

/** The window of document `i` as positions [lo, hi) of its partition. */
function windowOf(rows: Row[], i: number, window: WindowSpec | null, sort: SortSpec | null, options: Options): [number, number] {
  const n = rows.length;
  if (!window) return [0, n];
  if (window.kind === 'documents') {
    const lo = window.lower === 'unbounded' ? 0 : window.lower === 'current' ? i : i + window.lower;
    const hi = window.upper === 'unbounded' ? n : window.upper === 'current' ? i + 1 : i + window.upper + 1;
    const [a, b] = [Math.max(0, Math.min(lo, n)), Math.max(0, Math.min(hi, n))];
    return a < b ? [a, b] : [0, 0];
  }
  const dir = sort!.keys[0].dir;
  const value = (j: number) => rows[j].sort[0];
  const current = value(i);
  // The bound as a sort value: the current one moved by `offset` in sort order.
  const shifted = (offset: number): unknown => {
    const signed = offset * dir;
    if (window.unit) {
      if (!(current instanceof Date))
        throw new MongoCommandError(5429513, `Invalid range: Expected the sortBy field to be a Date, but it was ${typeName(current)}`);
      return expressionOperators.$dateAdd({}, { startDate: { $literal: current }, unit: window.unit, amount: signed }, options);
    }
    if (typeRank(current) !== 3)
      throw new MongoCommandError(5429414, `Invalid range: Expected the sortBy field to be a number, but it was ${typeName(current)}`);
    return toNumber(current) + signed;
  };
  for (let j = 0; j < n; j++) {
    const v = value(j);
    if (window.unit ? !(v instanceof Date) : typeRank(v) !== 3)
      throw new MongoCommandError(
        window.unit ? 5429513 : 5429414,
        `Invalid range: Expected the sortBy field to be a ${window.unit ? 'Date' : 'number'}, but it was ${typeName(v)}`,
      );
  }
  // In sort order: a document is inside when it is not before the lower bound and not after the upper one.
  const before = (v: unknown, bound: unknown) => compareBson(v, bound) * dir < 0;
  const lowerValue = window.lower === 'unbounded' ? null : shifted(window.lower === 'current' ? 0 : window.lower);
  const upperValue = window.upper === 'unbounded' ? null : shifted(window.upper === 'current' ? 0 : window.upper);
  let lo = 0;
  if (lowerValue !== null) while (lo < n && before(value(lo), lowerValue)) lo++;
  let hi = lo;
  while (hi < n && (upperValue === null || !before(upperValue, value(hi)))) hi++;
  return [lo, hi];
}

const typeName = (v: unknown) => (v === null || v === undefined ? 'null' : v instanceof Date ? 'date' : Array.isArray(v) ? 'array' : typeof v);
