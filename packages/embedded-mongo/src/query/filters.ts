/**
 * A filter made ready for mingo, read with MongoDB's grammar (query → field conditions → operators and their
 * arguments), so that literal values are never rewritten:
 * - `{ $regex: 'pattern', $options: 'imsx' }` becomes one `$regex` holding a RegExp with those flags (mingo treats
 *   every key of an operator object as an operator of its own, so `$options` is unknown to it);
 * - a DBRef (`{ $ref, $id, $db? }`, a plain document here) compared with a field is a value, not an operator
 *   object: it becomes `{ $eq: <dbref> }`. `$elemMatch` criteria on `$ref`/`$id`/`$db` are left to the engine's
 *   `$elemMatch` (bson-operators.ts).
 * The input is never modified; a filter that needs nothing is returned as it is.
 */
import type { Document } from 'bson';
import { isDbRef, isOperatorObject, isPlainObject } from '../bson-values.js';
import { badValue } from '../errors.js';
import { regexWithOptions } from './regex.js';

const QUERY_LISTS = new Set(['$and', '$or', '$nor']);

/** `out` is `source` until something changes, then a copy. */
function replaced<T extends Document | unknown[]>(out: T | undefined, source: T): T {
  return out ?? (Array.isArray(source) ? (source.slice() as T) : ({ ...source } as T));
}

export function prepareFilter(filter: Document): Document {
  let out: Document | undefined;
  for (const [key, value] of Object.entries(filter)) {
    const next = QUERY_LISTS.has(key) && Array.isArray(value) ? prepareList(value) : key.startsWith('$') ? value : prepareCondition(value);
    if (next !== value) (out = replaced(out, filter))[key] = next;
  }
  return out ?? filter;
}

function prepareList(queries: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  queries.forEach((q, i) => {
    const next = isPlainObject(q) ? prepareFilter(q) : q;
    if (next !== q) (out = replaced(out, queries))[i] = next;
  });
  return out ?? queries;
}

/** A field's condition: a value (left as it is), a DBRef, or an operator object. */
function prepareCondition(cond: unknown): unknown {
  if (isDbRef(cond)) return { $eq: cond };
  if (!isOperatorObject(cond)) return cond;
  let out: Document | undefined;
  if ('$options' in cond) {
    if (!('$regex' in cond)) throw badValue('$options needs a $regex');
    const { $regex, $options, ...rest } = cond;
    out = { ...rest, $regex: regexWithOptions($regex, $options) };
  }
  const source = out ?? cond;
  for (const [op, arg] of Object.entries(source)) {
    let next = arg;
    if (op === '$not') next = prepareCondition(arg);
    else if (op === '$elemMatch' && isPlainObject(arg)) next = elementCriteria(arg);
    else if (op === '$all' && Array.isArray(arg)) next = prepareAll(arg);
    if (next !== arg) (out = replaced(out, cond))[op] = next;
  }
  return out ?? cond;
}

/** `$elemMatch` criteria: operators on the element itself (`{ $gt: 5 }`), or a query over its fields. */
function elementCriteria(criteria: Document): unknown {
  const keys = Object.keys(criteria);
  const onElement = keys.length > 0 && !isDbRef(criteria) && keys.every((k) => k.startsWith('$') && !QUERY_LISTS.has(k) && k !== '$expr');
  return onElement ? prepareCondition(criteria) : prepareFilter(criteria);
}

function prepareAll(values: unknown[]): unknown[] {
  let out: unknown[] | undefined;
  values.forEach((v, i) => {
    if (!isPlainObject(v) || Object.keys(v)[0] !== '$elemMatch' || !isPlainObject(v.$elemMatch)) return;
    const criteria = elementCriteria(v.$elemMatch);
    if (criteria !== v.$elemMatch) (out = replaced(out, values))[i] = { ...v, $elemMatch: criteria };
  });
  return out ?? values;
}
