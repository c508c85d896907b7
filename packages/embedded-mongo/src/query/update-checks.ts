/**
 * Preconditions MongoDB enforces on the update operators mingo applies (`$push`, `$addToSet`, `$pop`, `$pullAll`,
 * `$bit`) and mingo silently skips (it leaves the document unchanged): array operators on a non-array, a field created
 * inside a scalar or across an array. They fail here with MongoDB's codes (2, 28). Paths are concrete (positional
 * paths are expanded before).
 */
import type { Document } from 'bson';
import { formatValue, isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { bsonTypeName } from './bson-operators.js';

const ARRAY_OPERATORS = new Set(['$push', '$addToSet', '$pullAll', '$pop']);
/** Operators that remove rather than create: a scalar along their path is simply a no-op, as in MongoDB. */
const NON_CREATING = new Set(['$pullAll', '$pop']);

const isIndex = (s: string) => /^\d+$/.test(s);

/** The value at a concrete dotted path; throws 28 when a creating operator would have to create a field in a scalar or an array. */
function leafValue(doc: Document, path: string, creating: boolean): unknown {
  const parts = path.split('.');
  let cur: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    let v: unknown;
    if (Array.isArray(cur) && isIndex(part)) v = cur[Number(part)];
    else if (isPlainObject(cur)) v = cur[part];
    else {
      if (creating) throw new MongoCommandError(28, `Cannot create field '${part}' in element {${parts[i - 1]}: ${formatValue(cur)}}`);
      return undefined;
    }
    if (v === undefined) return undefined;
    cur = v;
  }
  return cur;
}

/** Validates the mingo-applied part of a modifier against `doc`. */
export function checkUpdate(doc: Document, modifier: Document): void {
  for (const [op, fields] of Object.entries(modifier)) {
    for (const path of Object.keys(fields as Document)) {
      const value = leafValue(doc, path, !NON_CREATING.has(op));
      if (value === undefined || !ARRAY_OPERATORS.has(op) || Array.isArray(value)) continue;
      if (op === '$push' || op === '$addToSet')
        throw badValue(`The field '${path}' must be an array but is of type ${bsonTypeName(value)} in document {_id: ${formatValue(doc._id)}}`);
      throw badValue(`Cannot apply ${op} to a non-array value`);
    }
  }
}
