/**
 * The single place the engine talks to mingo. A private operator Context holds every mingo operator plus the
 * engine's corrections ($dateTrunc with time zones, BSON-aware $type and numeric comparisons, a $lookup that
 * never lets a pipeline mutate stored documents);
 * stages that would need a server ($out, $merge, ...) are refused. mingo errors become MongoDB errors here.
 */
import type { Document } from 'bson';
import { Aggregator } from 'mingo/aggregator';
import { Lazy } from 'mingo/lazy';
import { Context, ProcessingMode } from 'mingo/core';
import * as accumulatorOperators from 'mingo/operators/accumulator';
import * as expressionOperators from 'mingo/operators/expression';
import * as pipelineOperators from 'mingo/operators/pipeline';
import * as projectionOperators from 'mingo/operators/projection';
import * as queryOperators from 'mingo/operators/query';
import * as windowOperators from 'mingo/operators/window';
import { Query } from 'mingo/query';
import type { Options } from 'mingo/types';
import { update as mingoUpdate } from 'mingo/updater';
import { evalExpr } from 'mingo/core';
import { cloneDoc, equalityKey, isPlainObject, toNumber, typeRank } from '../bson-values.js';
import { fromMingoError, MongoCommandError } from '../errors.js';
import { expressionOverrides, projectionOverrides, queryOverrides } from './bson-operators.js';
import { collatorOf, type Collator } from './collation.js';
import { $dateTrunc } from './date-trunc.js';
import { plainNumbers } from './doubles.js';
import { jsonSchemaValidator } from './json-schema.js';
import { prepareFilter } from './filters.js';
import { hasRegex } from './guard.js';
import { then, type Maybe, type Task, type Work } from './work.js';
import { regexExpressions } from './regex.js';
import { projectionOrder } from './projection-order.js';
import { parseSort, sortDocuments } from './sort.js';
import { $setWindowFields } from './window.js';
import { $bucket, $bucketAuto, accumulatorOverrides, expressionArithmetic } from './arithmetic.js';
import { nAccumulators, nExpressions } from './n-accumulators.js';

/** Resolves a collection name of the current database to its stored documents (never to be mutated). */
export type CollectionReader = (name: string) => Document[];

/** What a query, projection or pipeline is evaluated under: the command's collation and `let` variables. */
export interface EvalOptions {
  collation?: Collator | null;
  variables?: Document;
}

interface EngineOptions extends Partial<Options> {
  /** Reads another collection without copying; used by $lookup, which copies only the documents it joins. */
  readCollection?: CollectionReader;
}

type LookupSpec = Parameters<typeof pipelineOperators.$lookup>[1];

/** $lookup over the stored documents, copying the joined ones so later stages can modify them freely. */
const $lookup: typeof pipelineOperators.$lookup = (collection, spec: LookupSpec, options) => {
  // A stage gets the Aggregator's options, or mingo's ComputeOptions wrapping them.
  const read = ((options as { options?: EngineOptions }).options ?? (options as EngineOptions)).readCollection;
  let from = spec.from;
  if (typeof from === 'string' && read) {
    // A sub-pipeline may itself modify what it reads, so it gets copies; a plain equality join only references them.
    from = spec.pipeline?.length ? read(from).map((d) => cloneDoc(plainNumbers(d))) : read(from).map(plainNumbers);
  }
  const as = spec.as;
  // An equality join answers the foreign documents in the foreign collection's order, as MongoDB's does (mingo
  // answered them in the order of the local array's values).
  const position = Array.isArray(from) && spec.localField && spec.foreignField && !spec.pipeline?.length ? new Map(from.map((d, i) => [d, i])) : null;
  return pipelineOperators.$lookup(collection, { ...spec, from }, options).map((doc) => {
    const d = doc as Document;
    let joined = d[as];
    if (position && Array.isArray(joined)) joined = joined.filter((j) => position.has(j)).sort((a, b) => position.get(a)! - position.get(b)!);
    d[as] = cloneDoc(joined);
    return d;
  });
};

/** `$sort` stage in BSON order (arrays by their smallest/largest element) under the collation, as find sorts. */
const $sort: typeof pipelineOperators.$sort = (collection, spec, options) => {
  const sort = parseSort(spec);
  if (!sort || sort.natural !== undefined) throw new MongoCommandError(15976, '$sort stage must have at least one sort key');
  return collection.transform((docs) => Lazy(sortDocuments(docs as Document[], sort, collatorOf(options))));
};

/** A stage's filter, prepared once: a pipeline run in pieces (runPipelineWork) must keep the same regex objects. */
const preparedMatches = new WeakMap<Document, Document>();

/** `$match` reads its filter as find does (`$regex` with `$options`, DBRef values, guarded regexes; see filters.ts). */
const $match: typeof pipelineOperators.$match = (collection, expr, options) => {
  let filter = preparedMatches.get(expr);
  if (!filter) preparedMatches.set(expr, (filter = prepareFilter(expr)));
  return pipelineOperators.$match(collection, filter, options);
};

/**
 * `$project` with MongoDB's field order for an inclusion projection (projection-order.ts): mingo puts `_id` last and
 * the fields in projection order. Each result is a projection of the document just read (the stage maps one to one).
 */
const $project: typeof pipelineOperators.$project = (collection, expr, options) => {
  const order = isPlainObject(expr) ? projectionOrder(expr) : null;
  if (!order) return pipelineOperators.$project(collection, expr, options);
  let current: Document = {};
  const read = collection.map((doc) => (current = doc as Document));
  return pipelineOperators.$project(read, expr, options).map((doc) => order(doc as Document, current));
};

/** The private expression that turns a `$group` key into its group (never valid in a pipeline as sent). */
const GROUP_KEY = '$__embeddedGroupKey';

/** Marks a group key made by `$groupKey` (a string that starts with a NUL is made one too, so none is taken for another). */
const TOKEN = '\0';

interface GroupKeyArgs {
  id: unknown;
  /** A group's key (a number, or a token) → the first key value seen in it, which the group answers as its `_id`. */
  firsts: Map<unknown, unknown>;
}

/**
 * A document's group, as mingo's `$group` compares keys: strings, booleans, null and dates as they are (mingo compares
 * those as MongoDB does), numbers of every BSON type as one JS number when they are exactly one (`1`, `1.0` and
 * `NumberLong(1)` are one group), anything else (documents, arrays, ObjectIds, other numbers) as a token string of its
 * equality key (bson-values.ts `equalityKey`: documents in field order), which is also quicker for mingo to group.
 */
const $groupKey = (obj: object, args: unknown, options: Options) => {
  const { id, firsts } = (args ?? {}) as Partial<GroupKeyArgs>;
  if (!(firsts instanceof Map)) throw new MongoCommandError(168, `Unrecognized expression '${GROUP_KEY}'`);
  const value = evalExpr(obj, id, options) ?? null;
  if (value === null || typeof value === 'boolean' || value instanceof Date || (typeof value === 'string' && !value.startsWith(TOKEN))) return value;
  let key: unknown;
  if (typeof value === 'number') key = value;
  else if (typeRank(value) === 3 && Number.isSafeInteger(toNumber(value))) key = toNumber(value);
  else key = TOKEN + equalityKey(value);
  if (!firsts.has(key)) firsts.set(key, value);
  return key;
};

/** The private expression that evaluates one of a keyed `$group`'s accumulators with its group's real `_id`. */
const WITH_GROUP_ID = '$__embeddedWithGroupId';

interface WithGroupIdArgs {
  firsts: Map<unknown, unknown>;
  accumulator: unknown;
}

/**
 * An accumulator of a keyed `$group` sees the group's key value as its `_id` (`$topN`'s `n` may be an expression of
 * the group's `_id`), not the token `$groupKey` made of it.
 */
const $withGroupId = (obj: object, args: unknown, options: Options) => {
  const { firsts, accumulator } = (args ?? {}) as Partial<WithGroupIdArgs>;
  if (!(firsts instanceof Map)) throw new MongoCommandError(168, `Unrecognized expression '${WITH_GROUP_ID}'`);
  const compute = options as Options & { local?: { groupId?: unknown }; update?: (locals: object) => void };
  const token = compute.local?.groupId;
  if (!compute.update || !firsts.has(token)) return evalExpr(obj, accumulator, options);
  compute.update({ groupId: firsts.get(token) });
  try {
    return evalExpr(obj, accumulator, options);
  } finally {
    compute.update({ groupId: token });
  }
};

/** A group key mingo compares as MongoDB does. */
const plainKey = (v: unknown) => v === null || typeof v === 'boolean' || typeof v === 'number' || v instanceof Date || (typeof v === 'string' && !v.startsWith(TOKEN));

/**
 * `$group` with MongoDB's key equality: mingo's ignores the order of a document's fields (`{ a: 1, b: 2 }` and
 * `{ b: 2, a: 1 }` would be one group) and tells `1` from `NumberLong(1)`. With the `_id` expression wrapped in
 * `$groupKey`, each group answers the first key value seen in it (null for a missing key, as in MongoDB). A document
 * `_id` (`{ day: ..., status: ... }`) is wrapped at once; any other is grouped by mingo first, which stands when every
 * key it met was a plain one (the usual case, and then nothing is added to mingo's work).
 */
const $group: typeof pipelineOperators.$group = (collection, expr, options) => {
  if (!isPlainObject(expr) || !('_id' in expr)) return pipelineOperators.$group(collection, expr, options);
  const keyed = (source: Parameters<typeof pipelineOperators.$group>[0]) => {
    const args: GroupKeyArgs = { id: expr._id, firsts: new Map() };
    const keyedExpr: Document = { _id: { [GROUP_KEY]: args } };
    for (const [field, accumulator] of Object.entries(expr)) {
      if (field !== '_id') keyedExpr[field] = { [WITH_GROUP_ID]: { firsts: args.firsts, accumulator } satisfies WithGroupIdArgs };
    }
    return pipelineOperators.$group(source, keyedExpr as Parameters<typeof pipelineOperators.$group>[1], options).map((doc) => {
      const d = doc as Document;
      if (args.firsts.has(d._id)) d._id = args.firsts.get(d._id);
      return d;
    });
  };
  const id = expr._id;
  if (isPlainObject(id) && !Object.keys(id).some((k) => k.startsWith('$'))) return keyed(collection);
  return collection.transform((items) => {
    const groups = pipelineOperators.$group(Lazy(items), expr, options).collect<Document>();
    return groups.every((g) => plainKey(g._id)) ? Lazy(groups) : keyed(Lazy(items));
  });
};

const QUERY_OPERATORS = { ...queryOperators, ...queryOverrides };
const PROJECTION_OPERATORS_ALL = { ...projectionOperators, ...projectionOverrides };

const CONTEXT = Context.init({
  accumulator: { ...accumulatorOperators, ...accumulatorOverrides, ...nAccumulators },
  expression: { ...expressionOperators, ...expressionOverrides, ...expressionArithmetic, ...nExpressions, ...regexExpressions, $dateTrunc, [GROUP_KEY]: $groupKey, [WITH_GROUP_ID]: $withGroupId },
  pipeline: { ...pipelineOperators, $bucket, $bucketAuto, $group, $lookup, $match, $project, $setWindowFields, $sort },
  projection: PROJECTION_OPERATORS_ALL,
  query: QUERY_OPERATORS,
  window: windowOperators,
});

/**
 * mingo copies the whole operator Context into every Query and every update it runs (some 270
 * operators, and an update adds a few sets more), which made that copying a large share of a simple
 * find or update. Filters, projections and operator updates that use no aggregation expression get
 * this context of the query and projection operators alone (about 40).
 */
const QUERY_CONTEXT = Context.init({ query: QUERY_OPERATORS, projection: PROJECTION_OPERATORS_ALL });

/** Stages MongoDB knows that need server features this engine does not have. */
export const UNSUPPORTED_STAGES = new Set([
  '$geoNear',
  '$collStats',
  '$indexStats',
  '$currentOp',
  '$listSessions',
  '$planCacheStats',
  '$changeStream',
  '$search',
  '$searchMeta',
  '$vectorSearch',
]);

const BASE_OPTIONS: Partial<Options> = {
  context: CONTEXT,
  // `$where` and `$function` in MongoDB take JavaScript source strings; mingo only takes functions. Refuse them.
  scriptEnabled: false,
  processingMode: ProcessingMode.CLONE_OFF,
  jsonSchemaValidator,
};
const QUERY_OPTIONS: Partial<Options> = { ...BASE_OPTIONS, context: QUERY_CONTEXT };

/** mingo options for a compilation: the collation (a Collator is also mingo's collation option) and variables. */
function withEval(options: Partial<Options>, e: EvalOptions | undefined): Partial<Options> {
  if (!e?.collation && !e?.variables) return options;
  return { ...options, collation: (e.collation ?? undefined) as Options['collation'], variables: e.variables };
}

/** Whether `$expr` (aggregation expressions inside a query) appears anywhere in `value`. */
export function usesExpressions(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(usesExpressions);
  return Object.entries(value).some(([key, nested]) => key === '$expr' || usesExpressions(nested));
}

const PROJECTION_OPERATORS = new Set(['$slice', '$elemMatch']);

/** Whether a find projection computes values (field paths, expressions) rather than only keeping or dropping fields. */
export function projectsExpressions(projection: Document): boolean {
  return Object.values(projection).some((value) => {
    if (typeof value === 'number' || typeof value === 'boolean') return false;
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return true;
    return Object.keys(value).some((key) => !PROJECTION_OPERATORS.has(key)) || usesExpressions(value);
  });
}

export const optionsFor = (needsExpressions: boolean, e?: EvalOptions) => withEval(needsExpressions ? BASE_OPTIONS : QUERY_OPTIONS, e);

export type OperatorType = 'pipeline' | 'expression' | 'accumulator' | 'query' | 'projection' | 'window';

export function hasOperator(type: OperatorType, name: string): boolean {
  return CONTEXT.getOperator(type as never, name) !== null;
}

const ALL_TYPES: OperatorType[] = ['pipeline', 'expression', 'accumulator', 'query', 'projection', 'window'];

/** Whether `name` is an operator of any kind (used to reject unknown `$names` anywhere in a pipeline). */
export const isKnownOperator = (name: string) => ALL_TYPES.some((t) => hasOperator(t, name));

/** Runs `fn`, turning whatever mingo throws into a MongoDB-shaped error. */
export function withMingo<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw fromMingoError(err);
  }
}

export interface Matcher {
  test(doc: Document): boolean;
  /** The filter runs regexes: its evaluation should be guarded (guard.ts, work.ts). */
  guarded?: boolean;
}

const MATCH_ALL: Matcher = { test: () => true };

/** A filter for `doc => boolean`, under the command's collation and variables. Expressions see plain numbers. */
export function compileFilter(filter: Document | undefined | null, e?: EvalOptions): Matcher {
  if (!filter || Object.keys(filter).length === 0) return MATCH_ALL;
  const normalized = prepareFilter(filter);
  const expressions = usesExpressions(normalized);
  const query = withMingo(() => new Query(normalized, optionsFor(expressions, e)));
  const guarded = hasRegex(normalized);
  if (expressions) return { test: (doc) => withMingo(() => query.test(plainNumbers(doc))), guarded };
  return { test: (doc) => withMingo(() => query.test(doc)), guarded };
}

/** Evaluates `let` variables, which are expressions (`{ $add: [1, 2] }` is 3, `{ $literal: '$x' }` the string '$x'). */
export function evaluateVariables(variables: Document | undefined): Document | undefined {
  if (!variables) return undefined;
  const out: Document = {};
  for (const [name, expr] of Object.entries(variables)) out[name] = withMingo(() => evalExpr({}, plainNumbers(expr), BASE_OPTIONS as Options));
  return out;
}

/**
 * Runs a pipeline on documents that belong to the caller (copies): several mingo stages modify their input in place.
 * The input must hold plain numbers (see `doubles.ts`).
 */
export function runPipeline(docs: Document[], pipeline: Document[], readCollection: CollectionReader, e?: EvalOptions): Document[] {
  return withMingo(() => new Aggregator(pipeline, pipelineOptions(readCollection, e)).run(docs) as Document[]);
}

function pipelineOptions(readCollection: CollectionReader, e: EvalOptions | undefined): EngineOptions {
  return {
    ...withEval(BASE_OPTIONS, e),
    readCollection,
    // $unionWith and $graphLookup feed other collections into later stages: they get copies.
    collectionResolver: (name: string) => readCollection(name).map((d) => cloneDoc(plainNumbers(d))),
  };
}

/** Stages that turn each document into at most one, alone: a pipeline that starts with them can run in pieces. */
const PER_DOCUMENT_STAGES = new Set(['$match', '$project', '$addFields', '$set', '$unset', '$replaceRoot', '$replaceWith', '$redact']);

/** A piece of a pipeline's input aims at this much work, so that a turn ends close to its slice. */
const PIECE_TARGET_MS = 4;

/**
 * The leading per-document stages of a pipeline over `source`, a few documents at a time (copied by `copy` just
 * before), so that the command can give up the thread between pieces; a piece the watchdog stopped is run again.
 */
class PipelinePieces implements Task {
  readonly out: Document[] = [];
  private at = 0;
  private size = 16;
  private unfinished = false;

  constructor(
    private readonly source: Document[],
    private readonly copy: (doc: Document) => Document,
    private readonly aggregator: Aggregator,
  ) {}

  step(until: number, maxItems: number): boolean {
    // A piece stopped by the watchdog is run again one document at a time.
    if (this.unfinished) this.size = 1;
    for (let n = 0; this.at < this.source.length; n++) {
      if (n >= maxItems || (n > 0 && performance.now() >= until)) return false;
      const end = Math.min(this.at + this.size, this.source.length);
      const started = performance.now();
      this.unfinished = true;
      const results = withMingo(() => this.aggregator.run(this.source.slice(this.at, end).map(this.copy)) as Document[]);
      this.unfinished = false;
      for (const doc of results) this.out.push(doc);
      const perDoc = (performance.now() - started) / (end - this.at);
      this.size = Math.max(1, Math.min(256, Math.floor(PIECE_TARGET_MS / Math.max(perDoc, 0.001))));
      this.at = end;
    }
    return true;
  }
}

/**
 * `runPipeline` as part of a command's work (work.ts): its leading per-document stages run over `source` in pieces,
 * with other connections' commands between turns; the rest (stages that need all their input, such as `$group`,
 * `$sort`, `$facet`) runs in one turn, on a fresh copy of its input each time the watchdog makes it start again.
 * Under the regex guard when the pipeline has regexes. `copy` makes each source document the caller's own.
 */
export function runPipelineWork(
  source: Document[],
  copy: (doc: Document) => Document,
  pipeline: Document[],
  readCollection: CollectionReader,
  e: EvalOptions | undefined,
  work: Work,
): Maybe<Document[]> {
  const options = pipelineOptions(readCollection, e);
  const guarded = hasRegex(pipeline);
  let split = 0;
  while (split < pipeline.length && PER_DOCUMENT_STAGES.has(Object.keys(pipeline[split])[0])) split++;
  const head = pipeline.slice(0, split);
  const tail = pipeline.slice(split);
  const pieces = head.length ? new PipelinePieces(source, copy, new Aggregator(head, options)) : null;
  const headDone = pieces ? work.run(pieces, guarded) : undefined;
  return then(headDone, () => {
    if (!tail.length) return pieces!.out;
    const input = pieces ? pieces.out : source;
    const fresh = pieces ? (guarded ? (d: Document) => cloneDoc(d) : (d: Document) => d) : copy;
    let result: Document[] = [];
    const whole: Task = {
      step: () => {
        result = withMingo(() => new Aggregator(tail, options).run(input.map(fresh)) as Document[]);
        return true;
      },
    };
    return then(work.run(whole, guarded), () => result);
  });
}

/** Applies update operators to `doc` in place; returns the modified paths (empty when nothing changed). */
export function applyOperators(doc: Document, modifier: Document, arrayFilters: Document[] | undefined, condition: Document | undefined, e?: EvalOptions): string[] {
  const filters = arrayFilters?.map(prepareFilter);
  const queryOptions = optionsFor(usesExpressions(filters) || usesExpressions(condition), e);
  return withMingo(() => mingoUpdate(doc, modifier, filters, condition && prepareFilter(condition), { queryOptions }));
}

/** A mingo Query for projections (positional `$` needs the filter), see projection.ts. */
export function projectionQuery(filter: Document | undefined, needsExpressions: boolean, e?: EvalOptions): Query {
  return withMingo(() => new Query(prepareFilter(filter ?? {}), optionsFor(needsExpressions, e)));
}

