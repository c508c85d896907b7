/**
 * aggregate: the leading `$match` (and a following `$sort`, `$skip`, `$limit`) run through the find planner so
 * indexes (and `$text`) apply; mingo runs the remaining stages on copies of the selected documents. A final `$out`
 * or `$merge` writes the result (aggregate-output.ts); a view runs its own pipeline first (views.ts).
 */
import type { Document } from 'bson';
import { cloneDoc, isPlainObject, toNumber } from '../bson-values.js';
import { failedToParse, MongoCommandError } from '../errors.js';
import { plainNumbers } from '../query/doubles.js';
import { runPipeline, runPipelineWork } from '../query/mingo.js';
import { validatePipeline } from '../query/pipeline-check.js';
import { findDocuments, type ExecutionStats, type FindRequest } from '../query/planner.js';
import { then, type Maybe } from '../query/work.js';
import { OUTPUT_STAGES, writeOutput } from './aggregate-output.js';
import { collationFor, letVariables, optionalCount, type CommandContext, type CommandHandler } from './context.js';
import { localSessions } from './sessions.js';
import { aggregateView, collectionReader } from './views.js';

/** Splits off the prefix the planner can execute: `$match`* then optionally `$sort`, `$skip`, `$limit`. */
function pushdown(pipeline: Document[]): { request: FindRequest; rest: Document[] } {
  const request: FindRequest = {};
  let i = 0;
  const filters: Document[] = [];
  while (i < pipeline.length && '$match' in pipeline[i]) filters.push(pipeline[i++].$match as Document);
  if (filters.length) request.filter = filters.length === 1 ? filters[0] : { $and: filters };
  if (i < pipeline.length && '$sort' in pipeline[i] && !hasTextScore(pipeline[i])) {
    request.sort = pipeline[i++].$sort as Document;
    let skip = 0;
    while (i < pipeline.length && '$skip' in pipeline[i] && !request.limit) skip += toNumber(pipeline[i++].$skip);
    if (i < pipeline.length && '$limit' in pipeline[i]) request.limit = toNumber(pipeline[i++].$limit);
    if (skip) request.skip = skip;
    if (request.limit !== undefined && !(Number.isInteger(request.limit) && request.limit > 0))
      throw new MongoCommandError(15958, 'the limit must be positive');
    if (!(Number.isInteger(skip) && skip >= 0)) throw new MongoCommandError(15956, 'invalid argument to $skip stage: Cannot skip a negative number of documents');
  }
  return { request, rest: pipeline.slice(i) };
}

/** The hidden field carrying a document's `$text` score through the stages after the first `$match`. */
const SCORE_FIELD = '__embeddedTextScore';

function hasTextScore(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasTextScore);
  if (!isPlainObject(value)) return false;
  return (value.$meta === 'textScore' && Object.keys(value).length === 1) || Object.values(value).some(hasTextScore);
}

/** `{ $meta: 'textScore' }` rewritten to read the hidden score field (`$sort` on it: highest first). */
function withScoreField(value: unknown, inSort = false): unknown {
  if (Array.isArray(value)) return value.map((v) => withScoreField(v));
  if (!isPlainObject(value)) return value;
  if (value.$meta === 'textScore' && Object.keys(value).length === 1) return inSort ? -1 : `$${SCORE_FIELD}`;
  const out: Document = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === '$sort' && isPlainObject(v)) {
      const sort: Document = {};
      for (const [f, d] of Object.entries(v)) sort[hasTextScore(d) ? SCORE_FIELD : f] = withScoreField(d, true);
      out[k] = sort;
    } else if (k === '$project' && isPlainObject(v) && Object.entries(v).some(([f, d]) => f !== '_id' && d !== 0 && d !== false)) {
      // The score stays available after an inclusion projection, as MongoDB's text metadata does.
      out[k] = { ...(withScoreField(v) as Document), [SCORE_FIELD]: 1 };
    } else out[k] = withScoreField(v);
  }
  return out;
}

/**
 * Stages verified to only read their input documents in mingo. A remaining pipeline made only of these needs no
 * copies of the stored documents (its output may reference them, but nothing modifies them afterwards).
 */
const READ_ONLY_STAGES = new Set(['$match', '$sort', '$skip', '$limit', '$count', '$group', '$sortByCount']);

const isReadOnly = (pipeline: Document[]): boolean =>
  pipeline.every((stage) => {
    const name = Object.keys(stage)[0];
    return READ_ONLY_STAGES.has(name) || (name === '$facet' && Object.values(stage.$facet as Document).every((sub) => isReadOnly(sub as Document[])));
  });

/** Database-level aggregation (`aggregate: 1`): its first stage produces the documents. */
function databaseInput(ctx: CommandContext, pipeline: Document[]): Document[] {
  const first = pipeline[0] ? Object.keys(pipeline[0])[0] : undefined;
  if (first === '$documents') return [];
  if (first === '$listLocalSessions') {
    pipeline.shift();
    return localSessions(ctx.engine);
  }
  throw new MongoCommandError(73, `{aggregate: 1} is not valid for '${first ?? 'an empty pipeline'}'; a collection is required.`);
}

interface Aggregation {
  ns: string;
  docs: Document[];
  stats: ExecutionStats | null;
}

/** Runs the aggregation; `stats` describes the planner part, for explain. */
export function runAggregate(ctx: CommandContext): Maybe<Aggregation> {
  const body = ctx.body;
  const target = body.aggregate;
  const pipeline = body.pipeline;
  validatePipeline(pipeline, { withText: true });
  const variables = letVariables(body);
  const readCollection = collectionReader(ctx.engine, ctx.db);
  const last = pipeline[pipeline.length - 1];
  const output = last && OUTPUT_STAGES.has(Object.keys(last)[0]) ? last : undefined;
  const stages = output ? pipeline.slice(0, -1) : pipeline.slice();
  const finish = (ns: string, docs: Document[], stats: ExecutionStats | null): Aggregation => {
    if (!output) return { ns, docs, stats };
    writeOutput(ctx, output, docs, variables);
    return { ns, docs: [], stats };
  };
  if (target === 1) {
    const input = databaseInput(ctx, stages);
    return finish(`${ctx.db}.$cmd.aggregate`, runPipeline(input, stages, readCollection, { variables }), null);
  }
  if (typeof target !== 'string' || !target) throw failedToParse("'aggregate' must be a collection name or 1");
  const ns = `${ctx.db}.${target}`;
  const coll = ctx.engine.collection(ctx.db, target);
  if (coll?.isView) return then(aggregateView(ctx.engine, ctx.db, coll, stages, variables, ctx.work), (docs) => finish(ns, docs, null));
  const collation = collationFor(body, coll);
  const { request, rest } = pushdown(stages);
  const found = findDocuments(coll, { ...request, hint: body.hint ?? undefined, collation, variables, work: ctx.work });
  return then(found, ({ docs, stats, scores }) => {
    if (!scores && hasTextScore(rest)) throw new MongoCommandError(40218, 'query requires text score metadata, but it is not available');
    if (!rest.length) return finish(ns, docs, stats);
    let copy: (doc: Document) => Document;
    let remaining = rest;
    if (scores) {
      copy = (d) => ({ ...cloneDoc(plainNumbers(d)), [SCORE_FIELD]: scores.get(d) ?? 0 });
      remaining = [...(withScoreField(rest) as Document[]), { $unset: SCORE_FIELD }];
    } else {
      // Stored documents are shared and immutable; several mingo stages modify their input, so it gets copies.
      copy = isReadOnly(rest) ? plainNumbers : (d) => cloneDoc(plainNumbers(d));
    }
    return then(runPipelineWork(docs, copy, remaining, readCollection, { collation, variables }, ctx.work), (result) => finish(ns, result, stats));
  });
}

const aggregate: CommandHandler = (ctx) => {
  const cursor = ctx.body.cursor;
  if (!isPlainObject(cursor)) throw failedToParse("The 'cursor' option is required, except for aggregate with the explain argument");
  return then(runAggregate(ctx), ({ ns, docs }) => {
    const batch = ctx.engine.cursors.open(ns, docs, optionalCount(cursor, 'batchSize'), null);
    return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
  });
};

export const aggregateCommands: Record<string, CommandHandler> = { aggregate };
