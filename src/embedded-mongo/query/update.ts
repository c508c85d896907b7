/**
 * Applying one update specification to one document: operator updates (through mingo's updater, plus
 * `$setOnInsert` which mingo lacks), replacement documents and pipeline updates. The stored document is never
 * touched: the result is a new document, compared with the old one to know whether anything changed.
 */
import { ObjectId, type Document } from 'bson';
import { cloneDoc, compareBson, formatValue, isPlainObject } from '../bson-values.js';
import { badValue, failedToParse, MongoCommandError } from '../errors.js';
import { applyOperators, runPipeline, type CollectionReader } from './mingo.js';
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
  /** The document is being created by an upsert: `$setOnInsert` applies. */
  inserting: boolean;
  readCollection: CollectionReader;
}

function immutableId(before: Document, after: Document): void {
  if ('_id' in before && compareBson(before._id, after._id) !== 0)
    throw new MongoCommandError(66, `Performing an update on the path '_id' would modify the immutable field '_id'`);
}

/** The updated version of `doc` (a new object) and whether it differs from the original. */
export function applyUpdate(doc: Document, u: Document | Document[], kind: UpdateKind, opts: UpdateOptions): { doc: Document; changed: boolean } {
  if (kind === 'pipeline') {
    const [out] = runPipeline([cloneDoc(doc)], u as Document[], opts.readCollection);
    if (!out) throw badValue('update pipeline produced no document');
    immutableId(doc, out);
    return { doc: out, changed: compareBson(doc, out) !== 0 };
  }
  if (kind === 'replacement') {
    const replacement = u as Document;
    if ('_id' in replacement && '_id' in doc && compareBson(replacement._id, doc._id) !== 0)
      throw new MongoCommandError(66, `After applying the update, the (immutable) field '_id' was found to have been altered to _id: ${formatValue(replacement._id)}`);
    const next: Document = '_id' in doc ? { _id: doc._id } : {};
    for (const [k, v] of Object.entries(replacement)) if (k !== '_id' || !('_id' in doc)) next[k] = cloneDoc(v);
    return { doc: next, changed: compareBson(doc, next) !== 0 };
  }
  const requested: Document = { ...(u as Document) };
  const onInsert = requested.$setOnInsert as Document | undefined;
  delete requested.$setOnInsert;
  if (onInsert && opts.inserting) requested.$set = { ...(requested.$set as Document | undefined), ...onInsert };
  const modifier = checkUpdate(doc, requested);
  if (Object.keys(modifier).length === 0) return { doc, changed: false };
  const next = cloneDoc(doc);
  const seeded = seedMissingPushArrays(next, modifier.$push as Document | undefined);
  // The positional operator needs the filter to know which element matched; otherwise the filter is not passed,
  // because mingo would skip the update when the document does not match it (an upsert's seed may not).
  const positional = !opts.inserting && Object.values(modifier).some((v) => Object.keys(v as Document).some((p) => /\.\$(\.|$)/.test(p)));
  const paths = applyOperators(next, modifier, opts.arrayFilters, positional ? opts.query : undefined);
  immutableId(doc, next);
  return { doc: next, changed: seeded || paths.length > 0 };
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
 * which creates those itself. Answers whether any field was created.
 */
function seedMissingPushArrays(doc: Document, push: Document | undefined): boolean {
  let seeded = false;
  for (const [path, spec] of Object.entries(push ?? {})) {
    const modified = isPlainObject(spec) && '$each' in spec && PUSH_MODIFIERS.some((modifier) => modifier in spec);
    if (modified && !path.includes('$') && missingThroughObjects(doc, path)) {
      setPath(doc, path, []);
      seeded = true;
    }
  }
  return seeded;
}

function setPath(doc: Document, path: string, value: unknown): void {
  const parts = path.split('.');
  let target = doc;
  for (const part of parts.slice(0, -1)) {
    if (!isPlainObject(target[part])) target[part] = {};
    target = target[part] as Document;
  }
  target[parts[parts.length - 1]] = cloneDoc(value);
}

/** The document an upsert starts from: the filter's equality conditions (top level and inside `$and`). */
export function upsertSeed(query: Document | undefined, seed: Document = {}): Document {
  for (const [k, v] of Object.entries(query ?? {})) {
    if (k === '$and' && Array.isArray(v)) for (const sub of v) if (isPlainObject(sub)) upsertSeed(sub, seed);
    if (k.startsWith('$') || v instanceof RegExp) continue;
    const ops = isPlainObject(v) ? Object.keys(v).filter((x) => x.startsWith('$')) : [];
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
