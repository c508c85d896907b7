/**
 * The field order of an inclusion projection's result, for find projections (projection.ts) and `$project` stages
 * (mingo.ts): mingo builds the result in projection order with `_id` last; MongoDB answers the fields taken from the
 * document in the document's order (`_id` first, as stored), then the computed ones (and `$elemMatch` projections)
 * in the projection's order.
 */
import type { Document } from 'bson';
import { isPlainObject, setOwn } from '../bson-values.js';

const isInclusion = (v: unknown) => v === 1 || v === true;
const isExclusion = (v: unknown) => v === 0 || v === false;

/** `result` with its keys in `source`'s order (recursively), keys not in `source` (computed ones) after them. */
function orderLike(result: unknown, source: unknown): unknown {
  if (Array.isArray(result) && Array.isArray(source)) return result.length === source.length ? result.map((r, i) => orderLike(r, source[i])) : result;
  if (!isPlainObject(result) || !isPlainObject(source)) return result;
  const out: Document = {};
  for (const k of Object.keys(source)) if (k in result) setOwn(out, k, orderLike(result[k], source[k]));
  for (const k of Object.keys(result)) if (!(k in out)) setOwn(out, k, result[k]);
  return out;
}

/** Top-level fields an inclusion projection takes from the document (`a: 1`, `'a.b': 1`, `a: { b: 1 }`, `$slice`), not computes. */
function includedFields(spec: Document): Set<string> {
  const fields = new Set<string>();
  for (const [k, v] of Object.entries(spec)) {
    const head = k.split('.')[0];
    const nested = isPlainObject(v) && (Object.keys(v).every((x) => !x.startsWith('$')) || '$slice' in v);
    if (isInclusion(v) || k.includes('.') || nested) fields.add(head);
  }
  return fields;
}

/** A computed field comes after the taken ones even when the document has a field of that name. */
function orderProjected(result: Document, source: Document, included: Set<string>, specOrder: string[]): Document {
  const out: Document = {};
  for (const k of Object.keys(source)) if (included.has(k) && k in result) setOwn(out, k, orderLike(result[k], source[k]));
  for (const k of specOrder) if (!(k in out) && k in result) setOwn(out, k, result[k]);
  for (const k of Object.keys(result)) if (!(k in out)) setOwn(out, k, result[k]);
  return out;
}

/** The ordering an inclusion projection `spec` needs, or null for an exclusion projection (which keeps the document's). */
export function projectionOrder(spec: Document): ((result: Document, source: Document) => Document) | null {
  const entries = Object.entries(spec).filter(([k]) => k !== '_id');
  if (entries.length === 0 || entries.every(([, v]) => isExclusion(v))) return null;
  const included = includedFields(spec);
  if (!('_id' in spec) || isInclusion(spec._id)) included.add('_id');
  const specOrder = [...new Set(Object.keys(spec).map((k) => k.split('.')[0]))];
  return (result, source) => orderProjected(result, source, included, specOrder);
}
