/**
 * `create` and `collMod`: the collection options the engine implements, validated as MongoDB 7.0 does and kept as
 * the collection's plain `options` document: capped (`size`, `max`), views (`viewOn`, `pipeline`), `validator` with
 * `validationLevel`/`validationAction`, default `collation`, time series (`timeseries`, `expireAfterSeconds`),
 * `clusteredIndex` (with `expireAfterSeconds`), `changeStreamPreAndPostImages` (stored; there are no change streams).
 * `collMod` also changes indexes (`expireAfterSeconds`, `hidden`, `prepareUnique`, `unique`) and capped limits.
 */
import type { Document } from 'bson';
import { compareBson, isPlainObject, toNumber } from '../bson-values.js';
import { badValue, MongoCommandError, notSupported, typeMismatch } from '../errors.js';
import { parseCollation } from '../query/collation.js';
import { validatePipeline } from '../query/pipeline-check.js';
import type { Collection } from '../storage/collection.js';
import { validateCollectionName } from '../storage/engine.js';
import type { SecondaryIndex } from '../storage/secondary-index.js';
import { collectionName, type CommandHandler } from './context.js';
import { checkValidator } from './validation.js';

/** Fields of a command envelope that are not collection options. */
const ENVELOPE = new Set([
  'create', 'collMod', '$db', 'lsid', 'txnNumber', 'autocommit', 'startTransaction', 'writeConcern', '$clusterTime', '$readPreference', 'comment',
  'maxTimeMS', 'apiVersion', 'apiStrict', 'apiDeprecationErrors',
]);

const CREATE_OPTIONS = new Set([
  'capped', 'size', 'max', 'viewOn', 'pipeline', 'validator', 'validationLevel', 'validationAction', 'collation', 'timeseries', 'expireAfterSeconds',
  'clusteredIndex', 'changeStreamPreAndPostImages', 'storageEngine', 'indexOptionDefaults', 'autoIndexId', 'flags',
]);

/** Options MongoDB has that the engine does not implement: refused rather than silently ignored. */
const REFUSED = ['encryptedFields'];

const TIMESERIES_FIELDS = new Set(['timeField', 'metaField', 'granularity', 'bucketMaxSpanSeconds', 'bucketRoundingSeconds']);

function normalizeTimeseries(ts: unknown): Document {
  if (!isPlainObject(ts)) throw typeMismatch("BSON field 'timeseries' is the wrong type, expected type 'object'");
  for (const k of Object.keys(ts)) if (!TIMESERIES_FIELDS.has(k)) throw new MongoCommandError(40415, `BSON field 'timeseries.${k}' is an unknown field.`);
  if (typeof ts.timeField !== 'string' || !ts.timeField) throw new MongoCommandError(40414, "BSON field 'timeseries.timeField' is missing but a required field");
  if (ts.metaField !== undefined && (typeof ts.metaField !== 'string' || ts.metaField === ts.timeField)) throw badValue("The 'metaField' must be a string different from the 'timeField'");
  const granularity = ts.granularity ?? (ts.bucketMaxSpanSeconds === undefined ? 'seconds' : undefined);
  if (granularity !== undefined && !['seconds', 'minutes', 'hours'].includes(granularity)) throw badValue(`Enumeration value '${String(granularity)}' for field 'timeseries.granularity' is not a valid value.`);
  const span = { seconds: 3600, minutes: 86400, hours: 2592000 }[granularity as 'seconds'] ?? toNumber(ts.bucketMaxSpanSeconds);
  return { ...ts, ...(granularity ? { granularity } : {}), bucketMaxSpanSeconds: span };
}

function normalizeClustered(ci: unknown): Document {
  if (!isPlainObject(ci)) throw typeMismatch("BSON field 'clusteredIndex' is the wrong type, expected type 'object'");
  if (compareBson(ci.key, { _id: 1 }) !== 0 || ci.unique !== true) throw badValue("The clusteredIndex option is only supported with key { _id: 1 } and unique: true");
  return { v: 2, key: { _id: 1 }, name: typeof ci.name === 'string' ? ci.name : '_id_', unique: true };
}

const isNumber = (v: unknown) => typeof v === 'number' || ['Double', 'Int32', 'Long', 'Decimal128'].includes((v as { _bsontype?: string })?._bsontype ?? '');

/**
 * `capped`, `size`, `max` as MongoDB 7.0's create reads them: `capped` is a boolean or a number (`capped: 1`, as
 * Mongoose sends it, is true); a capped collection needs a `size`, and `size` or `max` need `capped` (on any but a
 * clustered collection), both 72 InvalidOptions. Kept as `capped: true` with numeric `size` and `max`.
 */
function cappedOptions(options: Document): void {
  const { capped, size, max } = options;
  if (capped !== undefined && typeof capped !== 'boolean' && !isNumber(capped))
    throw typeMismatch(`BSON field 'create.capped' is the wrong type '${typeof capped}', expected types '[bool, long, int, decimal, double]'`);
  for (const [field, v] of [['size', size], ['max', max]] as const)
    if (v !== undefined && !isNumber(v)) throw typeMismatch(`BSON field 'create.${field}' is the wrong type '${typeof v}', expected types '[long, int, decimal, double]'`);
  const isCapped = capped === true || (isNumber(capped) && toNumber(capped) !== 0);
  if (isCapped && size === undefined) throw new MongoCommandError(72, "the 'size' field is required when 'capped' is true");
  if (!isCapped && (size !== undefined || max !== undefined) && options.clusteredIndex === undefined)
    throw new MongoCommandError(72, "the 'capped' field needs to be true when either the 'size' or 'max' fields are present");
  if (!isCapped) {
    delete options.capped;
    return;
  }
  options.capped = true;
  options.size = toNumber(size);
  if (!(options.size >= 1)) throw new MongoCommandError(51024, `BSON field 'size' value must be >= 1, actual value '${options.size}'`);
  if (max !== undefined) options.max = toNumber(max);
}

/** Validated `create` options, normalised as listCollections reports them. */
export function createOptions(body: Document): Document {
  const options: Document = {};
  for (const [k, v] of Object.entries(body)) if (!ENVELOPE.has(k)) options[k] = v;
  for (const k of Object.keys(options)) {
    if (REFUSED.includes(k)) throw notSupported(`create option '${k}' is not supported by the embedded engine`);
    if (!CREATE_OPTIONS.has(k)) throw new MongoCommandError(40415, `BSON field 'create.${k}' is an unknown field.`);
  }
  cappedOptions(options);
  if (options.viewOn !== undefined) {
    if (typeof options.viewOn !== 'string') throw typeMismatch("BSON field 'viewOn' is the wrong type, expected type 'string'");
    const pipeline = options.pipeline ?? [];
    validatePipeline(pipeline);
    if (pipeline.some((s: Document) => ['$out', '$merge'].includes(Object.keys(s)[0]))) throw new MongoCommandError(51047, '$out and $merge cannot be used in a view definition');
    options.pipeline = pipeline;
    for (const k of ['capped', 'validator', 'timeseries', 'clusteredIndex'])
      if (options[k] !== undefined) throw new MongoCommandError(72, `option '${k}' is not allowed for a view`);
  } else if (options.pipeline !== undefined) throw badValue("'pipeline' requires 'viewOn' to also be specified");
  checkValidator(options);
  if (options.collation !== undefined) {
    const collator = parseCollation(options.collation);
    if (collator) options.collation = collator.spec;
    else delete options.collation;
  }
  if (options.timeseries !== undefined) options.timeseries = normalizeTimeseries(options.timeseries);
  if (options.clusteredIndex !== undefined) options.clusteredIndex = normalizeClustered(options.clusteredIndex);
  if (options.expireAfterSeconds !== undefined) {
    if (!options.timeseries && !options.clusteredIndex) throw new MongoCommandError(72, "'expireAfterSeconds' is only supported on time-series and clustered collections");
    options.expireAfterSeconds = toNumber(options.expireAfterSeconds);
  }
  if (options.changeStreamPreAndPostImages !== undefined && !isPlainObject(options.changeStreamPreAndPostImages))
    throw typeMismatch("BSON field 'changeStreamPreAndPostImages' is the wrong type, expected type 'object'");
  return options;
}

export const create: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'create');
  validateCollectionName(name);
  const options = createOptions(ctx.body);
  const db = ctx.engine.db(ctx.db);
  if (db.collections.has(name)) throw new MongoCommandError(48, `Collection ${ctx.db}.${name} already exists.`);
  db.create(name, options);
  return {};
};

const COLLMOD_OPTIONS = new Set(['validator', 'validationLevel', 'validationAction', 'index', 'viewOn', 'pipeline', 'changeStreamPreAndPostImages', 'expireAfterSeconds', 'cappedSize', 'cappedMax', 'timeseries']);

/** collMod of one index: TTL, hidden, prepareUnique, unique (the index is rebuilt from its new spec). */
function modifyIndex(coll: Collection, change: Document): Document {
  const index = typeof change.name === 'string' ? coll.indexes.get(change.name) : isPlainObject(change.keyPattern) ? coll.findIndexByKey(change.keyPattern) : undefined;
  if (!index || index === coll.idIndex) throw new MongoCommandError(27, `cannot find index ${JSON.stringify(change.name ?? change.keyPattern)} for ns ${coll.ns}`);
  const spec = { ...index.spec };
  const reply: Document = {};
  if (change.expireAfterSeconds !== undefined) {
    if (spec.expireAfterSeconds === undefined) throw badValue('no expireAfterSeconds field to update');
    reply.expireAfterSeconds_old = spec.expireAfterSeconds;
    spec.expireAfterSeconds = toNumber(change.expireAfterSeconds);
    reply.expireAfterSeconds_new = spec.expireAfterSeconds;
  }
  if (change.hidden !== undefined) {
    reply.hidden_old = spec.hidden === true;
    if (change.hidden) spec.hidden = true;
    else delete spec.hidden;
    reply.hidden_new = change.hidden === true;
  }
  if (change.prepareUnique !== undefined) {
    reply.prepareUnique_old = spec.prepareUnique === true;
    if (change.prepareUnique) spec.prepareUnique = true;
    else delete spec.prepareUnique;
    reply.prepareUnique_new = change.prepareUnique === true;
  }
  if (change.unique !== undefined) {
    if (change.unique !== true) throw badValue('Cannot make index non-unique');
    if (spec.prepareUnique !== true) throw new MongoCommandError(20, "Cannot make index unique with 'prepareUnique: false'; set prepareUnique first");
    const violations = duplicates(index as SecondaryIndex);
    if (violations.length) throw new MongoCommandError(359, 'Cannot convert the index to unique. Please resolve conflicting documents before running collMod again.', { violations });
    reply.unique_new = true;
    spec.unique = true;
    delete spec.prepareUnique;
  }
  coll.putIndex(spec);
  return reply;
}

/** Groups of documents sharing a key of a (not yet unique) index. */
function duplicates(index: SecondaryIndex): Document[] {
  const out: Document[] = [];
  let group: unknown[] = [];
  let last: unknown[] | undefined;
  for (const e of index.entries.range({ b: 0, i: 0 }, index.entries.end, false)) {
    if (last && index.compareKeyPrefix(e, last, index.fields.length) === 0) group.push(e.id);
    else {
      if (group.length > 1) out.push({ ids: group });
      group = [e.id];
    }
    last = e.k;
  }
  if (group.length > 1) out.push({ ids: group });
  return out;
}

export const collMod: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'collMod');
  const coll = ctx.engine.collection(ctx.db, name);
  if (!coll) throw new MongoCommandError(26, `ns does not exist: ${ctx.db}.${name}`);
  const changes: Document = {};
  for (const [k, v] of Object.entries(ctx.body)) if (!ENVELOPE.has(k)) changes[k] = v;
  for (const k of Object.keys(changes)) if (!COLLMOD_OPTIONS.has(k)) throw new MongoCommandError(40415, `BSON field 'collMod.${k}' is an unknown field.`);
  const viewOptions = Object.keys(changes).filter((k) => k === 'viewOn' || k === 'pipeline');
  if (coll.isView && viewOptions.length !== Object.keys(changes).length) throw new MongoCommandError(72, 'collMod of a view may only change viewOn and pipeline');
  if (!coll.isView && viewOptions.length) throw new MongoCommandError(72, `${ctx.db}.${name} is a collection, not a view: viewOn and pipeline do not apply`);
  checkValidator(changes);
  if (changes.pipeline !== undefined) validatePipeline(changes.pipeline);
  const reply: Document = changes.index ? modifyIndex(coll, changes.index as Document) : {};
  const next: Document = { ...coll.options };
  for (const k of ['validator', 'validationLevel', 'validationAction', 'viewOn', 'pipeline', 'changeStreamPreAndPostImages', 'expireAfterSeconds'])
    if (changes[k] !== undefined) next[k] = changes[k];
  if (changes.cappedSize !== undefined || changes.cappedMax !== undefined) {
    if (!coll.options.capped) throw badValue('collMod cappedSize/cappedMax require a capped collection');
    if (changes.cappedSize !== undefined) next.size = toNumber(changes.cappedSize);
    if (changes.cappedMax !== undefined) next.max = toNumber(changes.cappedMax);
  }
  coll.setOptions(next);
  return reply;
};
