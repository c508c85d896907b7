/**
 * aggregate: the leading `$match` (and a following `$sort`, `$skip`, `$limit`) run through the find planner so
 * indexes apply; mingo runs the remaining stages on copies of the selected documents.
 */
import type { Document } from 'bson';
import { cloneDoc, isPlainObject, toNumber } from '../bson-values.js';
import { failedToParse, MongoCommandError } from '../errors.js';
import { runPipeline } from '../query/mingo.js';
import { validatePipeline } from '../query/pipeline-check.js';
import { findDocuments, type ExecutionStats, type FindRequest } from '../query/planner.js';
import { optionalCount, optionalDocument, type CommandContext, type CommandHandler } from './context.js';
import { checkCollation } from './read.js';
import { collectionReader } from './write-ops.js';

/** Splits off the prefix the planner can execute: `$match`* then optionally `$sort`, `$skip`, `$limit`. */
function pushdown(pipeline: Document[], variables: Document | undefined): { request: FindRequest; rest: Document[] } {
  const request: FindRequest = {};
  let i = 0;
  // With `let` variables a $match may reference them ($$name), which only mingo's pipeline evaluation resolves.
  if (!variables) {
    const filters: Document[] = [];
    while (i < pipeline.length && '$match' in pipeline[i]) filters.push(pipeline[i++].$match as Document);
    if (filters.length) request.filter = filters.length === 1 ? filters[0] : { $and: filters };
  }
  if (i < pipeline.length && '$sort' in pipeline[i]) {
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

/** Runs the aggregation; `stats` describes the planner part, for explain. */
export function runAggregate(ctx: CommandContext): { ns: string; docs: Document[]; stats: ExecutionStats | null } {
  const body = ctx.body;
  checkCollation(body);
  const target = body.aggregate;
  const pipeline = body.pipeline;
  validatePipeline(pipeline);
  const variables = optionalDocument(body, 'let');
  const readCollection = collectionReader(ctx.engine, ctx.db);
  if (target === 1) {
    // Database-level aggregation: only a pipeline starting with $documents has an input here.
    if (!pipeline.length || !('$documents' in pipeline[0])) throw new MongoCommandError(73, "{aggregate: 1} is not valid for '$match'; a collection is required.");
    return { ns: `${ctx.db}.$cmd.aggregate`, docs: runPipeline([], pipeline, readCollection, variables), stats: null };
  }
  if (typeof target !== 'string' || !target) throw failedToParse("'aggregate' must be a collection name or 1");
  const coll = ctx.engine.collection(ctx.db, target);
  const { request, rest } = pushdown(pipeline, variables);
  const { docs, stats } = findDocuments(coll, { ...request, hint: body.hint ?? undefined });
  // Stored documents are shared and immutable; several mingo stages modify their input, so it gets copies.
  const input = isReadOnly(rest) ? docs : docs.map(cloneDoc);
  const out = rest.length ? runPipeline(input, rest, readCollection, variables) : docs;
  return { ns: `${ctx.db}.${target}`, docs: out, stats };
}

const aggregate: CommandHandler = (ctx) => {
  const cursor = ctx.body.cursor;
  if (!isPlainObject(cursor)) throw failedToParse("The 'cursor' option is required, except for aggregate with the explain argument");
  const { ns, docs } = runAggregate(ctx);
  const batch = ctx.engine.cursors.open(ns, docs, optionalCount(cursor, 'batchSize'), null);
  return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
};

export const aggregateCommands: Record<string, CommandHandler> = { aggregate };
