/**
 * What a filter's top-level conjunction bounds, per field: points (a value, `$eq`, `$in`) and a range
 * (`$gt/$gte/$lt/$lte`), also from `$and` and from the branches of an `$or` (their union); and which of its conditions
 * a scan of those points already guarantees (`guaranteedFields`), so that they need no test per document.
 */
import type { Document } from 'bson';
import { compareBson, isOperatorObject, isPlainObject, isRegexValue, toNumber, typeRank } from '../bson-values.js';
import type { Collator } from './collation.js';

export interface Bound {
  value: unknown;
  inclusive: boolean;
}

/** What the filter's top-level conjunction says about one field. */
export interface FieldBounds {
  points?: unknown[];
  low?: Bound;
  high?: Bound;
}

export const MAX_POINTS = 1000;

const isPointValue = (v: unknown) => !isRegexValue(v) && !Array.isArray(v) && !isOperatorObject(v);

function addCondition(bounds: Map<string, FieldBounds>, field: string, cond: unknown): void {
  const b = bounds.get(field) ?? {};
  bounds.set(field, b);
  if (!isOperatorObject(cond)) {
    if (isPointValue(cond)) b.points ??= [cond];
    return;
  }
  for (const [op, v] of Object.entries(cond)) {
    if (op === '$eq' && isPointValue(v)) b.points ??= [v];
    else if (op === '$in' && Array.isArray(v) && v.length <= MAX_POINTS && v.every(isPointValue)) b.points ??= v;
    // An array operand compares with whole arrays, which an index does not hold as keys (it holds their elements).
    else if (Array.isArray(v)) continue;
    else if (op === '$gt' || op === '$gte') b.low ??= { value: v, inclusive: op === '$gte' };
    else if (op === '$lt' || op === '$lte') b.high ??= { value: v, inclusive: op === '$lte' };
  }
}

/** Bounds per field from the filter's implicit and explicit (`$and`) top-level conjunction, and its `$or`s. */
export function fieldBounds(filter: Document, collator: Collator | null, out = new Map<string, FieldBounds>()): Map<string, FieldBounds> {
  for (const [k, v] of Object.entries(filter)) {
    if (k === '$and' && Array.isArray(v)) for (const sub of v) if (isPlainObject(sub)) fieldBounds(sub, collator, out);
    if (k === '$or' && Array.isArray(v) && v.length > 0 && v.every(isPlainObject)) orBounds(v.map((sub) => fieldBounds(sub, collator)), out, collator);
    if (!k.startsWith('$')) addCondition(out, k, v);
  }
  return out;
}

/** The lower (`sign` -1) or upper (`sign` 1) end of one branch's bounds on a field; undefined when unbounded. */
function branchEnd(b: FieldBounds, sign: 1 | -1, collator: Collator | null): Bound | undefined {
  if (b.points) return { value: b.points.reduce((m, p) => (compareBson(p, m, collator) * sign > 0 ? p : m)), inclusive: true };
  return sign === 1 ? b.high : b.low;
}

/**
 * A field bounded in every branch of an `$or` is bounded by the union of the branches' bounds: all points when each
 * branch gives points, else the hull of their ranges. This serves keyset pagination such as
 * `$or: [{ createdAt: { $lt: t } }, { createdAt: t, _id: { $lt: id } }]` with the range `createdAt <= t`.
 */
function orBounds(branches: Map<string, FieldBounds>[], out: Map<string, FieldBounds>, collator: Collator | null): void {
  for (const field of branches[0].keys()) {
    const each = branches.map((b) => b.get(field));
    if (each.some((b) => !b || (!b.points && !b.low && !b.high))) continue;
    const bounds = each as FieldBounds[];
    const target = out.get(field) ?? {};
    out.set(field, target);
    if (bounds.every((b) => b.points)) {
      const points = bounds.flatMap((b) => b.points!);
      if (points.length <= MAX_POINTS) target.points ??= points;
      continue;
    }
    const hull = (sign: 1 | -1): Bound | undefined => {
      let best: Bound | undefined;
      for (const b of bounds) {
        const end = branchEnd(b, sign, collator);
        if (!end) return undefined;
        const c = best ? compareBson(end.value, best.value, collator) * sign : 1;
        if (c > 0 || (c === 0 && end.inclusive)) best = c > 0 ? end : { value: best!.value, inclusive: true };
      }
      return best;
    };
    target.low ??= hull(-1);
    target.high ??= hull(1);
  }
}

/** Value types whose index equality is exactly the query's equality (NaN, null, documents and arrays excluded). */
function isExactPoint(v: unknown): boolean {
  const rank = typeRank(v);
  if (rank === 3) return !Number.isNaN(toNumber(v));
  return rank === 4 || rank === 8 || rank === 9 || rank === 10;
}

/** The points of a condition that is nothing but a value, `$eq` or `$in` of exact points; else null. */
export function pointCondition(cond: unknown): unknown[] | null {
  if (!isOperatorObject(cond)) return isExactPoint(cond) ? [cond] : null;
  const ops = Object.keys(cond);
  if (ops.length !== 1) return null;
  if (ops[0] === '$eq') return isExactPoint(cond.$eq) ? [cond.$eq] : null;
  if (ops[0] === '$in' && Array.isArray(cond.$in) && cond.$in.length > 0 && cond.$in.every(isExactPoint)) return cond.$in;
  return null;
}

/**
 * The top-level fields of `filter` whose whole condition is equality to the points a scan reads (`scanned`, per
 * field), so that every document the scan yields satisfies them: the rest of the filter (`residualFilter`) is all
 * that still needs testing. Points must be the condition's own (a field also bounded by an `$and` may scan others).
 */
export function guaranteedFields(filter: Document, scanned: Map<string, unknown[]>, collator: Collator | null, multikey = false): Set<string> {
  const out = new Set<string>();
  for (const [field, points] of scanned) {
    if (!Object.hasOwn(filter, field)) continue;
    // A multikey index keys each element of an array, so an exact scalar equals a key exactly when the field or one
    // of its elements equals it, which is the query's equality too. Not `null` there (an element without the field
    // keys null in ways the query reads otherwise), nor paths with a position (`a.0`), which index and query read apart.
    if (multikey && field.split('.').some((part) => /^\d+$/.test(part))) continue;
    // `null` matches a missing field too, which a single-valued index keys as null as well: exact for a scan too.
    const own = pointCondition(filter[field]) ?? (!multikey && isNullCondition(filter[field]) ? [null] : null);
    if (own && own.length === points.length && own.every((p, i) => compareBson(p, points[i], collator) === 0)) out.add(field);
  }
  return out;
}

/**
 * A value whose range conditions a type-bracketed index range answers exactly: its BSON type rank, else null. Not
 * numbers: the query matcher takes NaN as below every number for `$lt`/`$lte`, where an index range leaves it out.
 */
function exactRangeRank(v: unknown): number | null {
  const rank = typeRank(v);
  if (rank === 8) return 8;
  if (rank === 10) return Number.isNaN((v as Date).getTime()) ? null : 10;
  return null;
}

/**
 * When `filter`'s own condition on `field` is nothing but the range a scan reads (`range`, taken from this very
 * condition) over ObjectIds or dates: that type's rank. Every entry of the range, bracketed by that type as
 * MongoDB brackets `$gt`/`$lt` (index `bounds` with a rank), then matches it on a single-valued index.
 */
export function guaranteedRange(filter: Document, field: string, range: { low?: Bound; high?: Bound }): number | null {
  if (!Object.hasOwn(filter, field) || !isOperatorObject(filter[field])) return null;
  let rank: number | null = null;
  for (const [op, v] of Object.entries(filter[field])) {
    const lower = op === '$gt' || op === '$gte';
    if (!lower && op !== '$lt' && op !== '$lte') return null;
    const r = exactRangeRank(v);
    const side = lower ? range.low : range.high;
    if (r === null || (rank !== null && r !== rank) || !side || side.value !== v || side.inclusive !== op.endsWith('e')) return null;
    rank = r;
  }
  return rank;
}

const isNullCondition = (cond: unknown) =>
  cond === null || (isOperatorObject(cond) && Object.keys(cond).length === 1 && cond.$eq === null);

export function residualFilter(filter: Document, guaranteed: Set<string>): Document {
  if (guaranteed.size === 0) return filter;
  const rest: Document = {};
  for (const [k, v] of Object.entries(filter)) if (!guaranteed.has(k)) rest[k] = v;
  return rest;
}

/**
 * A test for a filter of nothing but equality to exact points on top-level fields (`{ companyId: id }`, what remains
 * of a tenant's query once its scan is known), without compiling it with mingo: a field matches when its value, or
 * an element of its array value, equals a point. Null for any other filter.
 */
export function pointMatcher(filter: Document, collator: Collator | null): { test(doc: Document): boolean } | null {
  const conditions: [string, unknown[]][] = [];
  for (const [field, cond] of Object.entries(filter)) {
    const points = field.startsWith('$') || field.includes('.') ? null : pointCondition(cond);
    if (!points) return null;
    conditions.push([field, points]);
  }
  const equal = (v: unknown, points: unknown[]) => points.some((p) => compareBson(v, p, collator) === 0);
  return {
    test: (doc) =>
      conditions.every(([field, points]) => {
        const v = doc[field];
        return Array.isArray(v) ? v.some((el) => equal(el, points)) : equal(v, points);
      }),
  };
}
