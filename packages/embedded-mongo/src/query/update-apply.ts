/**
 * The update operators the engine applies itself, on concrete paths (positional paths are expanded first):
 * `$set`, `$setOnInsert`, `$unset`, `$inc`, `$mul`, `$min`, `$max`, `$currentDate`, `$rename`, `$pull`. They follow
 * MongoDB where mingo's do not: arithmetic over every BSON number class (int32 overflowing into int64, doubles kept
 * doubles, Decimal128 exact), BSON comparison order for `$min`/`$max`, a new Binary subtype counts as a change, `$pull` criteria with
 * `$or`/`$and`, `__proto__` as an ordinary field name, array positions padded with null, and MongoDB's errors (14 for
 * arithmetic on a non-number, 28 for a field created inside a scalar or an array). mingo applies the array
 * operators (`$addToSet`, `$pop`, `$pullAll`, `$bit`, and `$push` with `$slice`, `$sort` or `$position`); a plain
 * `$push` is applied here, sparing the updater's setup on the app's most frequent update.
 */
import { Double, Long, Timestamp, type Document } from 'bson';
import { cloneDoc, compareBson, formatValue, isDbRef, isPlainObject, setOwn, toNumber, typeRank } from '../bson-values.js';
import { badValue, MongoCommandError, typeMismatch } from '../errors.js';
import { bsonTypeName } from './bson-operators.js';
import { decimalArithmetic } from './decimal.js';
import { compileFilter, type EvalOptions } from './mingo.js';

export const ENGINE_OPERATORS = new Set(['$set', '$setOnInsert', '$unset', '$inc', '$mul', '$min', '$max', '$currentDate', '$rename', '$pull']);

const isIndex = (s: string) => /^\d+$/.test(s);
type Container = Document | unknown[];

/** The container and key of a path; intermediate documents are created when `create` (else null if missing). */
function locate(doc: Document, path: string, create: boolean): { parent: Container; key: string } | null {
  const parts = path.split('.');
  let cur: Container = doc;
  for (let i = 0; i < parts.length - 1; i++) {
    const part = parts[i];
    let next: unknown;
    if (Array.isArray(cur)) {
      if (!isIndex(part)) {
        if (create) throw new MongoCommandError(28, `Cannot create field '${part}' in element {${parts[i - 1]}: ${formatValue(cur)}}`);
        return null;
      }
      next = cur[Number(part)];
    } else next = Object.prototype.hasOwnProperty.call(cur, part) ? cur[part] : undefined;
    if (next === undefined) {
      if (!create) return null;
      next = {};
      write(cur, part, next);
    } else if (!Array.isArray(next) && !isPlainObject(next)) {
      if (create) throw new MongoCommandError(28, `Cannot create field '${parts[i + 1]}' in element {${part}: ${formatValue(next)}}`);
      return null;
    }
    cur = next as Container;
  }
  const last = parts[parts.length - 1];
  if (Array.isArray(cur) && !isIndex(last)) {
    if (create) throw new MongoCommandError(28, `Cannot create field '${last}' in element {${parts[parts.length - 2]}: ${formatValue(cur)}}`);
    return null;
  }
  return { parent: cur, key: last };
}

const read = (c: Container, key: string): unknown =>
  Array.isArray(c) ? c[Number(key)] : Object.prototype.hasOwnProperty.call(c, key) ? c[key] : undefined;

/** Writes a value; array positions past the end are padded with null, as MongoDB does. */
function write(c: Container, key: string, value: unknown): void {
  if (!Array.isArray(c)) return setOwn(c, key, value);
  const n = Number(key);
  while (c.length < n) c.push(null);
  c[n] = value;
}

/** `$unset` of an array element sets it to null; of a field removes it. */
function remove(c: Container, key: string): void {
  if (Array.isArray(c)) {
    if (Number(key) < c.length) c[Number(key)] = null;
  } else delete c[key];
}

const isDouble = (v: unknown) => (v as { _bsontype?: string })?._bsontype === 'Double' || (typeof v === 'number' && !Number.isInteger(v));
const isLong = (v: unknown) => v instanceof Long;
const isDecimal = (v: unknown) => (v as { _bsontype?: string })?._bsontype === 'Decimal128';
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

/**
 * `$inc`/`$mul` of two numbers with MongoDB's result type: Decimal128 if either is (decimal.ts), else double if either
 * is, else int64 if either is or int32 overflows.
 */
function arithmetic(op: '$inc' | '$mul', a: unknown, b: unknown): unknown {
  if (isDecimal(a) || isDecimal(b)) return decimalArithmetic(op, a, b);
  if (isDouble(a) || isDouble(b)) {
    const r = op === '$inc' ? toNumber(a) + toNumber(b) : toNumber(a) * toNumber(b);
    return Number.isInteger(r) ? new Double(r) : r;
  }
  const toLong = (v: unknown) => (v instanceof Long ? v : Long.fromNumber(toNumber(v)));
  const long = op === '$inc' ? toLong(a).add(toLong(b)) : toLong(a).multiply(toLong(b));
  if (isLong(a) || isLong(b)) return long;
  const n = long.toNumber();
  return n >= INT32_MIN && n <= INT32_MAX ? n : long;
}

/** Matches `$pull` criteria against one array element. */
function pullMatcher(spec: unknown, e: EvalOptions | undefined): (el: unknown) => boolean {
  if (isDbRef(spec)) {
    // Criteria on a DBRef's `$ref`/`$id`/`$db` fields: the engine's `$elemMatch` reads them (mingo takes them for operators).
    const m = compileFilter({ v: { $elemMatch: spec } }, e);
    return (el) => m.test({ v: [el] });
  }
  if (isPlainObject(spec)) {
    const keys = Object.keys(spec);
    const onElement = keys.length > 0 && keys.every((k) => k.startsWith('$') && !['$and', '$or', '$nor', '$expr', '$where', '$jsonSchema'].includes(k));
    if (!onElement) {
      const m = compileFilter(spec, e);
      return (el) => isPlainObject(el) && m.test(el);
    }
  }
  const m = compileFilter({ v: spec }, e);
  return (el) => m.test({ v: el });
}

/** Applies one engine operator to `doc` (a private copy) in place. */
export function applyEngineOperator(doc: Document, op: string, fields: Document, e: EvalOptions | undefined, now: Date): void {
  for (const [path, operand] of Object.entries(fields)) {
    switch (op) {
      case '$set':
      case '$setOnInsert': {
        const at = locate(doc, path, true)!;
        write(at.parent, at.key, cloneDoc(operand));
        break;
      }
      case '$unset': {
        const at = locate(doc, path, false);
        if (at) remove(at.parent, at.key);
        break;
      }
      case '$inc':
      case '$mul': {
        if (typeRank(operand) !== 3) throw typeMismatch(`Cannot ${op === '$inc' ? 'increment' : 'multiply'} with non-numeric argument: {${path}: ${formatValue(operand)}}`);
        const at = locate(doc, path, true)!;
        const current = read(at.parent, at.key);
        if (current !== undefined && typeRank(current) !== 3)
          throw typeMismatch(`Cannot apply ${op} to a value of non-numeric type. {_id: ${formatValue(doc._id)}} has the field '${path}' of non-numeric type ${bsonTypeName(current)}`);
        write(at.parent, at.key, arithmetic(op, current ?? 0, operand));
        break;
      }
      case '$min':
      case '$max': {
        const at = locate(doc, path, true)!;
        const current = read(at.parent, at.key);
        const c = current === undefined ? 0 : compareBson(operand, current, e?.collation);
        if (current === undefined || (op === '$min' ? c < 0 : c > 0)) write(at.parent, at.key, cloneDoc(operand));
        break;
      }
      case '$currentDate': {
        const kind = operand === true ? 'date' : isPlainObject(operand) ? operand.$type : undefined;
        if (kind !== 'date' && kind !== 'timestamp') throw badValue(`${path} is not valid type for $currentDate. Please use a boolean ('true') or a $type expression ({$type: 'timestamp/date'}).`);
        const at = locate(doc, path, true)!;
        write(at.parent, at.key, kind === 'date' ? new Date(now) : new Timestamp({ t: Math.floor(now.getTime() / 1000), i: 1 }));
        break;
      }
      case '$rename':
        rename(doc, path, operand);
        break;
      case '$push': {
        const at = locate(doc, path, true)!;
        const current = read(at.parent, at.key) as unknown[] | undefined;
        const values = isPlainObject(operand) && '$each' in operand ? (operand.$each as unknown[]) : [operand];
        if (current === undefined) write(at.parent, at.key, values.map(cloneDoc));
        else for (const value of values) current.push(cloneDoc(value));
        break;
      }
      case '$pull': {
        const at = locate(doc, path, false);
        const current = at ? read(at.parent, at.key) : undefined;
        if (current === undefined) break;
        if (!Array.isArray(current)) throw badValue('Cannot apply $pull to a non-array value');
        const matches = pullMatcher(operand, e);
        const kept = current.filter((el) => !matches(el));
        if (kept.length !== current.length) write(at!.parent, at!.key, kept);
        break;
      }
    }
  }
}

/**
 * Whether a `$push` operand is one the engine applies itself: a value, or `$each` of an array without modifiers
 * (`$slice`, `$sort`, `$position` are mingo's). The path must have been checked (checkUpdate): missing or an array.
 */
export function isPlainPush(operand: unknown): boolean {
  if (!isPlainObject(operand)) return true;
  const keys = Object.keys(operand);
  if (keys.length === 1 && keys[0] === '$each') return Array.isArray(operand.$each);
  return !keys.some((k) => k.startsWith('$'));
}

function rename(doc: Document, from: string, to: unknown): void {
  if (typeof to !== 'string') throw badValue(`The 'to' field for $rename must be a string: ${from}: ${formatValue(to)}`);
  if (from === to || to.startsWith(`${from}.`) || from.startsWith(`${to}.`)) throw badValue(`The source and target field for $rename must not be on the same path: ${from}: "${to}"`);
  for (const [p, what] of [[from, 'source'], [to, 'destination']] as const)
    if (p.split('.').some((c) => !c || c.startsWith('$'))) throw badValue(`The ${what} field for $rename must not be empty or start with '$': ${p}`);
  const source = locate(doc, from, false);
  if (!source) return;
  if (Array.isArray(source.parent)) throw badValue(`The source field cannot be an array element, '${from}' in doc with _id: ${formatValue(doc._id)} has an array field called '${from.split('.').slice(-2, -1)[0]}'`);
  const value = read(source.parent, source.key);
  if (value === undefined) return;
  const target = locate(doc, to, true)!;
  if (Array.isArray(target.parent)) throw badValue(`The destination field cannot be an array element, '${to}' in doc with _id: ${formatValue(doc._id)} has an array field called '${to.split('.').slice(-2, -1)[0]}'`);
  remove(source.parent, source.key);
  write(target.parent, target.key, value);
}
