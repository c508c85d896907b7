/**
 * The writing stages of aggregate: `$out` (replaces the target collection's documents, keeping its options and
 * indexes, all or nothing) and `$merge` (per document: `on` fields, `whenMatched` merge | replace | keepExisting |
 * fail | pipeline, `whenNotMatched` insert | discard | fail). Every document goes through the collection's ordinary
 * write methods with its validator and unique indexes.
 */
import { ObjectId, type Document } from 'bson';
import { cloneDoc, compareBson, isPlainObject } from '../bson-values.js';
import { badValue, MongoCommandError } from '../errors.js';
import { plainNumbers } from '../query/doubles.js';
import { evaluateVariables, runPipeline } from '../query/mingo.js';
import { findDocuments } from '../query/planner.js';
import { withIdFirst } from '../query/update.js';
import { UNRECORDED } from '../storage/changes.js';
import { Collection } from '../storage/collection.js';
import { validateCollectionName } from '../storage/engine.js';
import type { CommandContext } from './context.js';
import { checkId, checkSize, validateDocument } from './validation.js';
import { collectionReader } from './views.js';

export const OUTPUT_STAGES = new Set(['$out', '$merge']);

function target(ctx: CommandContext, spec: unknown, what: string): { db: string; coll: string } {
  if (typeof spec === 'string') return { db: ctx.db, coll: spec };
  if (isPlainObject(spec) && typeof spec.coll === 'string') return { db: typeof spec.db === 'string' ? spec.db : ctx.db, coll: spec.coll };
  throw badValue(`${what} must be a string or an object with 'db' and 'coll' fields`);
}

function outputCollection(ctx: CommandContext, db: string, name: string): Collection | undefined {
  validateCollectionName(name);
  const coll = ctx.engine.collection(db, name);
  if (coll?.isView) throw new MongoCommandError(166, `Namespace ${db}.${name} is a view, not a collection`);
  return coll;
}

/** `$out`: the target's documents become exactly `docs`; a failure (duplicate key, validation) leaves it unchanged. */
function out(ctx: CommandContext, spec: unknown, docs: Document[], bypass: boolean): void {
  if (isPlainObject(spec) && spec.timeseries !== undefined) throw new MongoCommandError(115, '$out to a time series collection is not supported by the embedded engine');
  const { db, coll: name } = target(ctx, spec, '$out');
  const existing = outputCollection(ctx, db, name);
  const output = docs.map((d) => withIdFirst(d._id === undefined ? { _id: new ObjectId(), ...d } : d));
  // A scratch collection with the target's options and indexes proves the whole result can be written.
  const scratch = new Collection(db, name, existing?.options ?? {}, UNRECORDED);
  for (const ix of existing?.indexes.values() ?? []) if (ix !== existing!.idIndex) scratch.createIndex(ix.spec);
  for (const doc of output) {
    checkId(doc);
    checkSize(doc, true);
    validateDocument(existing, doc, undefined, bypass);
    scratch.insert(doc);
  }
  const coll = existing ?? ctx.engine.db(db).ensure(name);
  for (const doc of [...coll.docs.values()]) coll.delete(doc);
  for (const doc of output) coll.insert(doc);
}

const WHEN_MATCHED = new Set(['merge', 'replace', 'keepExisting', 'fail']);
const WHEN_NOT_MATCHED = new Set(['insert', 'discard', 'fail']);

/** `$merge` of `docs` into its target, document by document. */
function merge(ctx: CommandContext, spec: unknown, docs: Document[], bypass: boolean, variables: Document | undefined): void {
  const s: Document = typeof spec === 'string' ? { into: spec } : isPlainObject(spec) ? spec : {};
  if (s.into === undefined) throw badValue("$merge requires an 'into' field");
  const { db, coll: name } = target(ctx, s.into, "$merge 'into'");
  const on = s.on === undefined ? ['_id'] : Array.isArray(s.on) ? (s.on as string[]) : [s.on as string];
  const whenMatched = s.whenMatched ?? 'merge';
  const whenNotMatched = s.whenNotMatched ?? 'insert';
  if (!Array.isArray(whenMatched) && !WHEN_MATCHED.has(whenMatched)) throw badValue(`Enumeration value '${String(whenMatched)}' for field 'whenMatched' is not a valid value.`);
  if (!WHEN_NOT_MATCHED.has(whenNotMatched)) throw badValue(`Enumeration value '${String(whenNotMatched)}' for field 'whenNotMatched' is not a valid value.`);
  let coll = outputCollection(ctx, db, name);
  const onId = on.length === 1 && on[0] === '_id';
  if (!onId) {
    const unique = [...(coll?.indexes.values() ?? [])].some(
      (ix) => ix.kind === 'btree' && ix.unique && ix.fields.length === on.length && on.every((f) => ix.fields.includes(f)) && !ix.partial,
    );
    if (!unique) throw new MongoCommandError(51183, "Cannot find index to verify that join fields will be unique");
  }
  const letVars = { ...variables, ...evaluateVariables(isPlainObject(s.let) ? s.let : undefined) };
  for (const raw of docs) {
    const doc = raw._id === undefined && onId ? { _id: new ObjectId(), ...raw } : raw;
    const key: Document = {};
    for (const f of on) {
      const v = f.split('.').reduce<unknown>((o, p) => (isPlainObject(o) ? o[p] : undefined), doc);
      if (v === undefined || v === null || Array.isArray(v)) throw new MongoCommandError(51132, `$merge write error: 'on' field '${f}' cannot be missing, null, undefined or an array`);
      key[f] = v;
    }
    const [found] = findDocuments(coll, { filter: key, limit: 1 }).docs;
    if (!found) {
      if (whenNotMatched === 'discard') continue;
      if (whenNotMatched === 'fail') throw new MongoCommandError(13113, '$merge could not find a matching document in the target collection for at least one document in the source collection');
      const inserted = withIdFirst(doc);
      checkId(inserted);
      checkSize(inserted, true);
      validateDocument(coll, inserted, undefined, bypass);
      coll ??= ctx.engine.db(db).ensure(name);
      coll.insert(inserted);
      continue;
    }
    if (whenMatched === 'keepExisting') continue;
    if (whenMatched === 'fail') {
      const dup = coll!.idIndex!;
      throw dup.duplicateKeyError(coll!.ns, [found._id]);
    }
    let next: Document;
    if (Array.isArray(whenMatched)) [next] = runPipeline([cloneDoc(plainNumbers(found))], whenMatched, collectionReader(ctx.engine, db), { variables: { ...letVars, new: doc } });
    else if (whenMatched === 'replace') next = { ...doc };
    else next = { ...found, ...doc };
    if ('_id' in next && compareBson(next._id, found._id) !== 0)
      throw new MongoCommandError(66, `$merge failed to update the matching document, did you attempt to modify the _id or the shard key? :: caused by :: Performing an update on the path '_id' would modify the immutable field '_id'`);
    next = withIdFirst({ ...next, _id: found._id });
    checkSize(next, false);
    validateDocument(coll, next, found, bypass);
    coll!.replace(found, next);
  }
}

/** Runs the output stage of a pipeline over its result documents. */
export function writeOutput(ctx: CommandContext, stage: Document, docs: Document[], variables: Document | undefined): void {
  const [name] = Object.keys(stage);
  const bypass = ctx.body.bypassDocumentValidation === true;
  if (name === '$out') out(ctx, stage.$out, docs, bypass);
  else merge(ctx, stage.$merge, docs, bypass, variables);
}
