/**
 * Find projections. mingo applies them, with MongoDB's rules added around it:
 * - a projection of only `$slice` (and `$meta`) entries, possibly with exclusions, keeps every other field (mingo
 *   would treat `$slice` as an inclusion);
 * - included fields come back in the document's order with `_id` first, computed fields after them (mingo builds the
 *   result in projection order, `_id` last; `$project` in a pipeline gets the same order, see mingo.ts);
 * - `{ $meta: 'textScore' }` adds the score a `$text` query gave the document.
 */
import type { Document } from 'bson';
import { cloneDoc, isPlainObject, setOwn } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { plainNumbers } from './doubles.js';
import { projectionQuery, projectsExpressions, usesExpressions, withMingo, type EvalOptions } from './mingo.js';
import { projectionOrder } from './projection-order.js';

/**
 * Applies a projection to a batch. `perDocument`: the projection is a function of each document alone, named by
 * `key` (the same key, the same output), so the encoded output of a stored document may be kept for the next read.
 */
export type Projector = ((docs: Document[]) => Document[]) & { perDocument?: DocumentView };

export interface DocumentView {
  key: string;
  apply: (doc: Document) => Document;
}

const isSlice = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 1 && '$slice' in v;
const isMeta = (v: unknown) => isPlainObject(v) && Object.keys(v).length === 1 && '$meta' in v;
const isExclusion = (v: unknown) => v === 0 || v === false;

/** `$slice` of a find projection: n first (negative: last) elements, or [skip, n]. */
function slice(arr: unknown[], spec: unknown): unknown[] {
  if (Array.isArray(spec)) {
    const [skip, n] = spec as number[];
    const start = skip < 0 ? Math.max(arr.length + skip, 0) : skip;
    return arr.slice(start, start + n);
  }
  const n = spec as number;
  return n < 0 ? arr.slice(Math.max(arr.length + n, 0)) : arr.slice(0, n);
}

/** Applies `$slice` at a dotted path of a (copied) document, through arrays of documents. */
function applySlice(doc: unknown, parts: string[], spec: unknown): void {
  if (Array.isArray(doc)) {
    for (const el of doc) applySlice(el, parts, spec);
    return;
  }
  if (!isPlainObject(doc)) return;
  const [head, ...rest] = parts;
  const v = doc[head];
  if (rest.length) applySlice(v, rest, spec);
  else if (Array.isArray(v)) setOwn(doc, head, slice(v, spec));
}

const isInclusion = (v: unknown) => v === 1 || v === true;

/**
 * The common projection `{ a: 1, b: 1 }` (top-level fields, `_id` included or not) applied without mingo: `_id`
 * first, then the included fields present, in the document's order (values are shared with the stored document,
 * which is never modified in place). Null for any other projection.
 */
function topLevelInclusion(spec: Document): DocumentView | null {
  const fields = new Set<string>();
  let withId = true;
  for (const [k, v] of Object.entries(spec)) {
    if (k === '_id' && (isInclusion(v) || isExclusion(v))) withId = isInclusion(v);
    else if (isInclusion(v) && !k.includes('.') && !k.startsWith('$') && k !== '__proto__') fields.add(k);
    else return null;
  }
  const apply = (doc: Document) => {
    const out: Document = {};
    if (withId && doc._id !== undefined) out._id = doc._id;
    for (const k of Object.keys(doc)) if (fields.has(k)) out[k] = doc[k];
    return out;
  };
  return { key: JSON.stringify([withId, ...[...fields].sort()]), apply };
}

function metaOf(spec: Document, key: string): string {
  const name = spec.$meta;
  if (name !== 'textScore') throw badValue(`Unsupported $meta in projection for '${key}': ${JSON.stringify(name)} (the embedded engine supports textScore)`);
  return name;
}

/** Compiles a find projection; null when there is none. `filter` serves the positional `$` operator. */
export function compileProjection(
  projection: Document | undefined,
  filter: Document | undefined,
  e?: EvalOptions,
  scoreOf?: (doc: Document) => number,
): Projector | null {
  if (!projection || Object.keys(projection).length === 0) return null;
  const slices: [string[], unknown][] = [];
  const metas: string[] = [];
  const rest: Document = {};
  for (const [k, v] of Object.entries(projection)) {
    if (isMeta(v)) {
      metaOf(v as Document, k);
      metas.push(k);
    } else if (isSlice(v)) slices.push([k.split('.'), (v as Document).$slice]);
    else rest[k] = v;
  }
  const exclusionMode = Object.values(rest).every(isExclusion);
  const withScores = (docs: Document[], source: Document[]) => {
    if (metas.length && !scoreOf) throw new MongoCommandError(40218, 'query requires text score metadata, but it is not available');
    if (metas.length) docs.forEach((d, i) => metas.forEach((k) => setOwn(d, k, scoreOf!(source[i]))));
    return docs;
  };
  if (exclusionMode) {
    const excluding = Object.keys(rest).length > 0 ? projectionQuery(undefined, false, e) : null;
    // mingo excludes nested fields by deleting them from a shallow copy: those documents get deep copies first.
    const deep = slices.length > 0 || Object.keys(rest).some((k) => k.includes('.'));
    return (docs) => {
      const input = deep ? docs.map(cloneDoc) : docs;
      const out = excluding ? withMingo(() => excluding.find(input, rest).all() as Document[]) : input.map((d) => ({ ...d }));
      for (const d of out) for (const [parts, spec] of slices) applySlice(d, parts, spec);
      return withScores(out, docs);
    };
  }
  if (slices.length === 0 && metas.length === 0) {
    const fast = topLevelInclusion(rest);
    if (fast) return Object.assign((docs: Document[]) => docs.map(fast.apply), { perDocument: fast });
  }
  const included: Document = { ...rest };
  for (const [parts, spec] of slices) included[parts.join('.')] = { $slice: spec };
  // Only the positional operator (`a.$`) reads the filter.
  const positionalFilter = Object.keys(included).some((k) => k.endsWith('.$')) ? filter : undefined;
  const expressions = projectsExpressions(included) || usesExpressions(positionalFilter);
  const query = projectionQuery(positionalFilter, expressions, e);
  const order = projectionOrder(included);
  return (docs) => {
    const input = expressions ? docs.map(plainNumbers) : docs;
    const out = withMingo(() => query.find(input, included).all() as Document[]);
    return withScores(
      out.map((d, i) => (order ? order(d, docs[i]) : d)),
      docs,
    );
  };
}
