/**
 * Preconditions MongoDB enforces on update operators and mingo silently skips (it leaves the document unchanged):
 * arithmetic on non-numbers, array operators on non-arrays, fields created inside a scalar. They fail here with
 * MongoDB's codes. Arithmetic on Long values, which mingo does not know, is computed here and applied as `$set`.
 */
import { Long, type Document } from 'bson';
import { formatValue, isPlainObject, toNumber, typeRank } from '../bson-values.js';
import { badValue, MongoCommandError, notSupported, typeMismatch } from '../errors.js';
import { bsonTypeName } from './bson-operators.js';

const ARRAY_OPERATORS = new Set(['$push', '$addToSet', '$pull', '$pullAll', '$pop']);
const ARITHMETIC = new Set(['$inc', '$mul']);
/** Operators that remove or move rather than create: a scalar along their path is simply a no-op, as in MongoDB. */
const NON_CREATING = new Set(['$unset', '$pull', '$pullAll', '$pop', '$rename']);

const isIndex = (s: string) => /^\d+$/.test(s);

/** The value at a plain dotted path (no positional operators); null when the path cannot be checked simply. */
function leafValue(doc: Document, path: string, creating: boolean): { value: unknown } | null {
  const parts = path.split('.');
  if (parts.some((p) => p.startsWith('$'))) return null;
  let cur: unknown = doc;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    let v: unknown;
    if (Array.isArray(cur)) {
      if (!isIndex(part)) return null;
      v = cur[Number(part)];
    } else if (isPlainObject(cur)) {
      v = cur[part];
    } else {
      if (creating) throw new MongoCommandError(28, `Cannot create field '${part}' in element {${parts[i - 1]}: ${formatValue(cur)}}`);
      return null;
    }
    if (i === parts.length - 1) return { value: v };
    if (v === undefined) return { value: undefined };
    cur = v;
  }
  return null;
}

function longArithmetic(op: string, current: unknown, operand: unknown): unknown {
  if (typeRank(operand) !== 3) throw typeMismatch(`Cannot ${op === '$inc' ? 'increment' : 'multiply'} with non-numeric argument: ${formatValue(operand)}`);
  const involved = [current, operand];
  if (involved.some((v) => (v as { _bsontype?: string })?._bsontype === 'Decimal128'))
    throw notSupported(`${op} on Decimal128 values is not supported by the embedded engine`);
  if (!involved.some((v) => v instanceof Long)) return undefined;
  const toLong = (v: unknown) => (v instanceof Long ? v : Long.fromNumber(toNumber(v ?? 0)));
  const base = toLong(current);
  return op === '$inc' ? base.add(toLong(operand)) : base.multiply(toLong(operand));
}

/** Validates `modifier` against `doc` and returns the modifier to give mingo (Long arithmetic moved into `$set`). */
export function checkUpdate(doc: Document, modifier: Document): Document {
  let computed: Document | undefined;
  const out: Document = {};
  for (const [op, fields] of Object.entries(modifier)) {
    const kept: Document = {};
    for (const [path, operand] of Object.entries(fields as Document)) {
      const leaf = leafValue(doc, path, !NON_CREATING.has(op));
      const value = leaf?.value;
      if (leaf && value !== undefined) {
        if (ARITHMETIC.has(op) && typeRank(value) !== 3)
          throw typeMismatch(`Cannot apply ${op} to a value of non-numeric type. {_id: ${formatValue(doc._id)}} has the field '${path}' of non-numeric type ${bsonTypeName(value)}`);
        if (ARRAY_OPERATORS.has(op) && !Array.isArray(value)) {
          if (op === '$push' || op === '$addToSet')
            throw badValue(`The field '${path}' must be an array but is of type ${bsonTypeName(value)} in document {_id: ${formatValue(doc._id)}}`);
          throw badValue(`Cannot apply ${op} to a non-array value`);
        }
      }
      if (ARITHMETIC.has(op) && leaf) {
        const result = longArithmetic(op, value, operand);
        if (result !== undefined) {
          (computed ??= {})[path] = result;
          continue;
        }
      }
      kept[path] = operand;
    }
    if (Object.keys(kept).length) out[op] = kept;
  }
  if (computed) out.$set = { ...(out.$set as Document | undefined), ...computed };
  return out;
}
