/**
 * Applying one update specification to one document: operator updates (through mingo's updater, plus
 * `$setOnInsert` which mingo lacks), replacement documents and pipeline updates. The stored document is never
 * touched: the result is a new document, compared with the old one to know whether anything changed.
 */
import { ObjectId, type Document } from 'bson';
import { cloneDoc, compareBson, formatValue, identical, isOperatorObject, isPlainObject, setOwn } from '../bson-values.js';
import { badValue, failedToParse, MongoCommandError } from '../errors.js';
import { plainNumbers, restoreDoubles } from './doubles.js';
import { applyOperators, runPipeline, type CollectionReader, type EvalOptions } from './mingo.js';
import { expandPositional } from './positional.js';
import { applyEngineOperator, ENGINE_OPERATORS, isPlainPush } from './update-apply.js';
import { checkUpdate } from './update-checks.js';

const OPERATORS = new Set([
  '$addToSet', '$bit', '$currentDate', '$inc', '$max', '$min', '$mul', '$pop', '$pull', '$pullAll', '$push',
  '$rename', '$set', '$setOnInsert', '$unset',
]);
const PIPELINE_STAGES = new Set(['$addFields', '$set', '$project', '$unset', '$replaceRoot', '$replaceWith']);

export type UpdateKind = 'operators' | 'replacement' | 'pipeline';

export function updateKind(u: unknown): UpdateKind {
  if (Array.isArray(u)) {
    for (const stage of u) {
      const name = isPlainObject(stage) ? Object.keys(stage)[0] : undefined;
      if (!name || !PIPELINE_STAGES.has(name))
        throw new MongoCommandError(72, `${name ?? 'A non-object stage'} is not allowed to be used within an update`);
    }
    return 'pipeline';
  }
  if (!isPlainObject(u)) throw failedToParse('Update argument must be either an object or an array');
  const keys = Object.keys(u);
  if (keys.length === 0 || !keys[0].startsWith('$')) {
    const op = keys.find((k) => k.startsWith('$'));
    if (op) throw failedToParse(`The dollar ($) prefixed field '${op}' in '${op}' is not allowed in the context of an update's replacement document.`);
    return 'replacement';
  }
  for (const op of keys) {
    if (!OPERATORS.has(op))
      throw failedToParse(`Unknown modifier: ${op}. Expected a valid update modifier or pipeline-style update specified as an array`);
    if (!isPlainObject(u[op]))
      throw failedToParse(`Modifiers operate on fields but we found type ${Array.isArray(u[op]) ? 'array' : typeof u[op]} instead. For example: {$mod: {<field>: ...}} not {${op}: ${formatValue(u[op])}}`);
  }
  return 'operators';
}

export interface UpdateOptions {
  arrayFilters?: Document[];
  /** The filter that selected the document, for the positional `$` operator. */
  query?: Document;
  /** The document is being created by an upsert: `$setOnInsert` applies and `_id` may be set. */
  inserting: boolean;
  readCollection: CollectionReader;
  /** The command's collation and `let` variables. */
  evalOptions?: EvalOptions;
}

const immutableIdError = () => new MongoCommandError(66, "Performing an update on the path '_id' would modify the immutable field '_id'");

/** MongoDB's update path conflicts: one path equal to or a prefix of another (code 40). */
function checkConflicts(modifier: Document): void {
  const paths: string[] = [];
  for (const [op, fields] of Object.entries(modifier)) {
    for (const [path, operand] of Object.entries(fields as Document)) {
      paths.push(path);
      if (op === '$rename' && typeof operand === 'string') paths.push(operand);
    }
  }
  const sorted = paths.map((p) => ({ p, parts: p.split('.') })).sort((a, b) => (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
  for (let i = 0; i < sorted.length; i++)
    for (let j = i + 1; j < sorted.length; j++) {
      const [a, b] = [sorted[i], sorted[j]];
      const shorter = a.parts.length <= b.parts.length ? a : b;
      const longer = shorter === a ? b : a;
      if (shorter.parts.every((part, k) => part === longer.parts[k]))
        throw new MongoCommandError(40, `Updating the path '${longer.p}' would create a conflict at '${shorter.p}'`);
    }
}

/** The updated version of `doc` (a new object) and whether it differs from the original. */
export function applyUpdate(doc: Document, u: Document | Document[], kind: UpdateKind, opts: UpdateOptions): { doc: Document; changed: boolean } {
  if (kind === 'pipeline') {
    const [out] = runPipeline([cloneDoc(plainNumbers(doc))], u as Document[], opts.readCollection, opts.evalOptions);
    if (!out) throw badValue('update pipeline produced no document');
    restoreDoubles(doc, out);
    // A pipeline that drops `_id` (e.g. `$replaceRoot` to a subdocument) keeps the document's `_id`, first.
    const next = '_id' in out || !('_id' in doc) ? out : { _id: doc._id, ...out };
    if ('_id' in doc && compareBson(doc._id, next._id) !== 0) throw immutableIdError();
    return { doc: next, changed: !identical(doc, next) };
  }
  if (kind === 'replacement') {
    const replacement = u as Document;
    if ('_id' in replacement && '_id' in doc && compareBson(replacement._id, doc._id) !== 0)
      throw new MongoCommandError(66, `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(replacement._id)}`);
    const next: Document = '_id' in doc ? { _id: doc._id } : {};
    for (const [k, v] of Object.entries(replacement)) if (k !== '_id' || !('_id' in doc)) setOwn(next, k, cloneDoc(v));
    return { doc: next, changed: !identical(doc, next) };
  }
  const requested: Document = { ...(u as Document) };
  const onInsert = requested.$setOnInsert as Document | undefined;
  delete requested.$setOnInsert;
  if (onInsert && opts.inserting) requested.$set = { ...(requested.$set as Document | undefined), ...onInsert };
  checkConflicts(u as Document);
  const modifier = expandPositional(doc, requested, opts.inserting ? undefined : opts.query, opts.arrayFilters, opts.evalOptions);
  const next = copyForUpdate(doc, modifier);
  const now = new Date();
  const mingoPart: Document = {};
  for (const [op, fields] of Object.entries(modifier)) {
    if (ENGINE_OPERATORS.has(op)) applyEngineOperator(next, op, fields as Document, opts.evalOptions, now);
    else if (op === '$push' && Object.values(fields as Document).every(isPlainPush)) {
      checkUpdate(next, { $push: fields });
      applyEngineOperator(next, op, fields as Document, opts.evalOptions, now);
    } else if (Object.keys(fields as Document).length) mingoPart[op] = fields;
  }
  if (Object.keys(mingoPart).length) {
    checkUpdate(next, mingoPart);
    seedMissingPushArrays(next, mingoPart.$push as Document | undefined);
    applyOperators(next, mingoPart, undefined, undefined, opts.evalOptions);
  }
  orderNewFields(doc, next, pathTree(modifier));
  if ('_id' in doc && !opts.inserting) {
    // Setting `_id` to its own value is a no-op (as `findByIdAndUpdate(id, wholeDocument)` does); changing it is not.
    if (compareBson(doc._id, next._id) !== 0) throw immutableIdError();
    next._id = doc._id;
  }
  return { doc: next, changed: !identical(doc, next) };
}

/**
 * A copy of `doc` the operators of `modifier` may change in place: the top-level fields along its paths are deep
 * copies, the others the stored values themselves (stored documents are never changed in place, so versions may share
 * them). An untouched field keeps its reference, which is how the collection sees that indexes on it need no update.
 */
function copyForUpdate(doc: Document, modifier: Document): Document {
  const touched = new Set<string>();
  for (const [op, fields] of Object.entries(modifier))
    for (const [path, operand] of Object.entries(fields as Document)) {
      touched.add(path.split('.')[0]);
      if (op === '$rename' && typeof operand === 'string') touched.add(operand.split('.')[0]);
    }
  const next: Document = {};
  for (const key of Object.keys(doc)) setOwn(next, key, touched.has(key) ? cloneDoc(doc[key]) : doc[key]);
  return next;
}

/** The field names along an update's paths, as a tree (`$rename` targets included). */
type PathTree = Map<string, PathTree>;

function pathTree(modifier: Document): PathTree {
  const root: PathTree = new Map();
  const add = (path: string) => {
    let node = root;
    for (const part of path.split('.')) {
      let child = node.get(part);
      if (!child) node.set(part, (child = new Map()));
      node = child;
    }
  };
  for (const [op, fields] of Object.entries(modifier))
    for (const [path, operand] of Object.entries(fields as Document)) {
      add(path);
      if (op === '$rename' && typeof operand === 'string') add(operand);
    }
  return root;
}

const isDigit = (c: string) => c >= '0' && c <= '9';

/**
 * MongoDB's order of field names within an update (`pathsupport::cmpPathsAndArrayIndexes`): names that are numbers
 * (no leading zero) by their value, everything else by bytes.
 */
export function compareFieldNames(a: string, b: string): number {
  const bytes = a < b ? -1 : a > b ? 1 : 0;
  if (!a || !b || !isDigit(a[0]) || !isDigit(b[0]) || (a[0] === '0' && a.length > 1) || (b[0] === '0' && b.length > 1)) return bytes;
  return a.length !== b.length ? a.length - b.length : bytes;
}

/**
 * MongoDB (5.0 and later) applies an update's paths in field-name order, so the fields an update creates come after
 * the existing ones, sorted by `compareFieldNames`; the engine applied them in the order written. This moves the new
 * fields created along the update's paths into that order. A document given as a value (`$set: { m: { z: 1, a: 2 } }`)
 * keeps its own order: only names on the paths are sorted.
 */
function orderNewFields(before: unknown, after: unknown, tree: PathTree): void {
  if (tree.size === 0) return;
  if (Array.isArray(after)) {
    for (const [name, child] of tree) if (/^\d+$/.test(name)) orderNewFields(Array.isArray(before) ? before[Number(name)] : undefined, after[Number(name)], child);
    return;
  }
  if (!isPlainObject(after)) return;
  const old = isPlainObject(before) ? before : undefined;
  const added = Object.keys(after).filter((k) => !(old && Object.prototype.hasOwnProperty.call(old, k)));
  if (added.length > 1) {
    const sorted = added.slice().sort(compareFieldNames);
    if (sorted.some((k, i) => k !== added[i])) {
      for (const k of sorted) {
        const value = after[k];
        delete after[k];
        setOwn(after, k, value);
      }
    }
  }
  for (const [name, child] of tree) if (Object.prototype.hasOwnProperty.call(after, name)) orderNewFields(old?.[name], after[name], child);
}

const PUSH_MODIFIERS = ['$slice', '$sort', '$position'];

/** Whether `path` is missing from `doc` and every document on the way to it is a plain object (or missing too). */
function missingThroughObjects(doc: Document, path: string): boolean {
  let value: unknown = doc;
  for (const part of path.split('.')) {
    if (value === undefined) return true;
    if (!isPlainObject(value)) return false;
    value = (value as Document)[part];
  }
  return value === undefined;
}

/**
 * mingo ignores `$slice`/`$sort`/`$position` when `$push` creates the array; MongoDB applies them to the new
 * array. Starting such a missing field as `[]` gives MongoDB's result. Paths through arrays are left to mingo,
 * which creates those itself.
 */
function seedMissingPushArrays(doc: Document, push: Document | undefined): void {
  for (const [path, spec] of Object.entries(push ?? {})) {
    const modified = isPlainObject(spec) && '$each' in spec && PUSH_MODIFIERS.some((modifier) => modifier in spec);
    if (modified && !path.includes('$') && missingThroughObjects(doc, path)) setPath(doc, path, []);
  }
}

function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split('.');
  let target = doc;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(target[part])) setOwn(target, part, {});
    target = target[part] as Document;
  }
  setOwn(target, parts[parts.length - 1], cloneDoc(value));
}

/** The document an upsert starts from: the filter's equality conditions (top level and inside `$and`). */
export function upsertSeed(query: Document | undefined, seed: Document = {}): Document {
  for (const [k, v] of Object.entries(query ?? {})) {
    if (k === '$and' && Array.isArray(v)) for (const sub of v) if (isPlainObject(sub)) upsertSeed(sub, seed);
    if (k.startsWith('$') || v instanceof RegExp) continue;
    const ops = isOperatorObject(v) ? Object.keys(v).filter((x) => x.startsWith('$')) : [];
    if (ops.length === 0) setPath(seed, k, v);
    else if (ops.length === 1 && ops[0] === '$eq') setPath(seed, k, (v as Document).$eq);
  }
  return seed;
}

/** `_id` first, generated when missing, as MongoDB stores documents. */
export function withIdFirst(doc: Document): Document {
  if ('_id' in doc && Object.keys(doc)[0] === '_id') return doc;
  const { _id = new ObjectId(), ...rest } = doc;
  return { _id, ...rest };
}
