/**
 * Whether a query implies a partial index's `partialFilterExpression`, so that every document the query matches is
 * in the index. MongoDB's rules (its `expression::isSubsetOf`), no more: the same index serves the same queries on
 * MongoDB 7 and here, and a query the rules do not cover scans as it would there.
 *
 * - The filter's conjuncts must each be implied; a query conjunct implies one when it is the same predicate, or:
 *   a comparison (`v`, `$eq`, `$lt`, `$lte`, `$gt`, `$gte`) implies a comparison on the same path and value type
 *   whose range contains it (`{ a: 7 }` and `{ a: { $gte: 8 } }` imply `{ a: { $gt: 5 } }`); an `$in` whose every
 *   value does; anything implies an `$in` when it implies one of its values; `$exists: true` is implied by a
 *   comparison with a non-null value, `$in` without null, `$type`, `$exists`, `$regex`, `$size`, `$mod`,
 *   `$elemMatch`, `$ne: null` and `$nin` with null. A query `$or` implies the filter when each branch does; a filter
 *   `$or` when the query implies one branch.
 * - `$type` is implied only by the same `$type` (MongoDB does not infer it from an equality's value), so
 *   `{ externalId: 'x' }` does not reach an index filtered on `{ externalId: { $type: 'string' } }`.
 * - Strings compare under the query's collation only when it is the index's; NaN implies only NaN equality.
 */
import type { Document } from 'bson';
import { compareBson, hasStrings, isOperatorObject, isPlainObject, isRegexValue, toNumber, typeRank } from '../bson-values.js';
import { typeAlias } from './bson-operators.js';
import { sameCollation, type Collator } from './collation.js';

type Node =
  | { kind: 'and' | 'or'; children: Node[] }
  | { kind: 'cmp'; path: string; op: '$eq' | '$lt' | '$lte' | '$gt' | '$gte'; value: unknown }
  | { kind: 'in'; path: string; values: unknown[]; regex: boolean }
  | { kind: 'exists'; path: string }
  | { kind: 'type'; path: string; types: string }
  | { kind: 'not'; path: string; child: Node }
  /** Operators these rules do not reason about (they only imply `$exists: true` or the very same operator). */
  | { kind: 'other'; path: string; op: string; operand: unknown };

const COMPARISONS = new Set(['$eq', '$lt', '$lte', '$gt', '$gte']);
/** Operators that match only documents where the path exists. */
const EXISTENCE_IMPLYING = new Set(['$regex', '$size', '$mod', '$elemMatch']);


function parseOperator(path: string, op: string, operand: unknown): Node {
  if (COMPARISONS.has(op) && !isRegexValue(operand)) return { kind: 'cmp', path, op: op as '$eq', value: operand };
  if (op === '$in' && Array.isArray(operand)) return { kind: 'in', path, values: operand.filter((v) => !isRegexValue(v)), regex: operand.some(isRegexValue) };
  if (op === '$exists' && operand === true) return { kind: 'exists', path };
  if (op === '$type') {
    const types = (Array.isArray(operand) ? operand : [operand]).map((t) => typeAlias(typeof t === 'object' && t !== null ? toNumber(t) : t) ?? String(t));
    return { kind: 'type', path, types: [...new Set(types)].sort().join(',') };
  }
  if (op === '$ne') return { kind: 'not', path, child: { kind: 'cmp', path, op: '$eq', value: operand } };
  if (op === '$nin' && Array.isArray(operand)) return { kind: 'not', path, child: parseOperator(path, '$in', operand) };
  if (op === '$not' && isOperatorObject(operand)) return { kind: 'not', path, child: parseField(path, operand) };
  return { kind: 'other', path, op, operand };
}

function parseField(path: string, cond: unknown): Node {
  if (!isOperatorObject(cond)) return isRegexValue(cond) ? { kind: 'other', path, op: '$regex', operand: cond } : { kind: 'cmp', path, op: '$eq', value: cond };
  const children = Object.entries(cond)
    .filter(([op]) => op !== '$options')
    .map(([op, operand]) => parseOperator(path, op, operand));
  return children.length === 1 ? children[0] : { kind: 'and', children };
}

/** A filter document as a tree of conjunctions, disjunctions and per-path predicates. */
export function parseFilter(filter: Document): Node {
  const children: Node[] = [];
  for (const [key, value] of Object.entries(filter)) {
    if ((key === '$and' || key === '$or') && Array.isArray(value)) {
      const parts = value.filter(isPlainObject).map(parseFilter);
      children.push(parts.length === 1 ? parts[0] : { kind: key === '$and' ? 'and' : 'or', children: parts });
    } else {
      children.push(key.startsWith('$') ? { kind: 'other', path: '', op: key, operand: value } : parseField(key, value));
    }
  }
  return children.length === 1 ? children[0] : { kind: 'and', children };
}

export type FilterTree = Node;

const supportsEquality = (op: string) => op === '$eq' || op === '$lte' || op === '$gte';

interface Context {
  queryCollator: Collator | null;
  indexCollator: Collator | null;
}

/** A query comparison implies a filter comparison (same path assumed). */
function comparisonImplies(q: { op: string; value: unknown }, f: { op: string; value: unknown }, ctx: Context): boolean {
  if (typeRank(q.value) !== typeRank(f.value)) return false;
  const qNaN = Number.isNaN(toNumber(q.value)) && typeRank(q.value) === 3;
  const fNaN = Number.isNaN(toNumber(f.value)) && typeRank(f.value) === 3;
  if (qNaN || fNaN) return supportsEquality(q.op) && supportsEquality(f.op) && qNaN && fNaN;
  if (!sameCollation(ctx.queryCollator, ctx.indexCollator) && hasStrings(q.value)) return false;
  const c = compareBson(q.value, f.value, ctx.indexCollator);
  if (q.op === f.op && c === 0) return true;
  const upper = q.op === '$lt' || q.op === '$lte' || q.op === '$eq';
  const lower = q.op === '$gt' || q.op === '$gte' || q.op === '$eq';
  if (f.op === '$lt' || f.op === '$lte') return upper && (f.op === '$lte' ? c <= 0 : c < 0);
  if (f.op === '$gt' || f.op === '$gte') return lower && (f.op === '$gte' ? c >= 0 : c > 0);
  return false;
}

const pathOf = (n: Node): string | undefined => ('children' in n ? undefined : n.path);

function sameNode(a: Node, b: Node): boolean {
  if (a.kind !== b.kind || pathOf(a) === undefined || pathOf(a) !== pathOf(b)) return false;
  switch (a.kind) {
    case 'type':
      return a.types === (b as typeof a).types;
    case 'exists':
      return true;
    case 'other':
      return a.op === (b as typeof a).op && compareBson(a.operand, (b as typeof a).operand) === 0;
    default:
      return false;
  }
}

function implies(q: Node, f: Node, ctx: Context): boolean {
  if (sameNode(q, f)) return true;
  if (f.kind === 'or' && f.children.some((branch) => implies(q, branch, ctx))) return true;
  if (f.kind === 'and') return f.children.every((part) => implies(q, part, ctx));
  if (q.kind === 'and') return q.children.some((part) => implies(part, f, ctx));
  if (q.kind === 'or') return q.children.length > 0 && q.children.every((branch) => implies(branch, f, ctx));
  if (pathOf(f) === undefined || pathOf(q) !== pathOf(f)) return false;
  switch (f.kind) {
    case 'cmp':
      if (q.kind === 'cmp') return comparisonImplies(q, f, ctx);
      return q.kind === 'in' && !q.regex && q.values.every((value) => comparisonImplies({ op: '$eq', value }, f, ctx));
    case 'in':
      return !f.regex && f.values.some((value) => implies(q, { kind: 'cmp', path: f.path, op: '$eq', value }, ctx));
    case 'exists':
      return existenceImplied(q);
    default:
      return false;
  }
}

/** Whether a predicate on the path matches only documents where the path exists (is not null or missing). */
function existenceImplied(q: Node): boolean {
  switch (q.kind) {
    case 'cmp':
      return q.value !== null && q.value !== undefined;
    case 'in':
      return !q.values.some((v) => v === null);
    case 'exists':
    case 'type':
      return true;
    case 'other':
      return EXISTENCE_IMPLYING.has(q.op);
    case 'not': {
      const c = q.child;
      return c.kind === 'cmp' ? c.op === '$eq' && c.value === null : c.kind === 'in' && c.values.some((v) => v === null);
    }
    default:
      return false;
  }
}

/** Whether every document `query` matches (under `queryCollator`) also matches a partial index's filter. */
export function impliesFilter(query: FilterTree, filter: FilterTree, queryCollator: Collator | null, indexCollator: Collator | null): boolean {
  return implies(query, filter, { queryCollator, indexCollator });
}
