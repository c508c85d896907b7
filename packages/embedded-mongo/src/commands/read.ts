/** Read commands: find, getMore, killCursors, count, distinct. */
import { Long, type Document } from 'bson';
import { compareBson, toNumber } from '../bson-values.js';
import { badValue, MongoCommandError, notSupported, typeMismatch } from '../errors.js';
import { pathValues } from '../query/paths.js';
import { findDocuments, type FindRequest, type FindResult } from '../query/planner.js';
import { compileProjection } from '../query/projection.js';
import { then, type Maybe } from '../query/work.js';
import { collationFor, collectionName, letVariables, optionalCount, optionalDocument, type CommandContext, type CommandHandler } from './context.js';
import { findInView } from './views.js';

/** Options MongoDB accepts on find that would change results here if silently ignored. */
const REFUSED_FIND_OPTIONS = ['awaitData', 'min', 'max', 'returnKey', 'showRecordId'];

/** The read request of a find-like command on collection `name` (its filter under `filterField`). */
export function findRequest(ctx: CommandContext, name: string, filterField: string): FindRequest {
  const body = ctx.body;
  return {
    filter: optionalDocument(body, filterField),
    sort: optionalDocument(body, 'sort'),
    skip: optionalCount(body, 'skip'),
    hint: body.hint ?? undefined,
    collation: collationFor(body, ctx.engine.collection(ctx.db, name)),
    variables: letVariables(body),
    work: ctx.work,
  };
}

/** Runs a read on a collection or a view. */
export function readDocuments(ctx: CommandContext, name: string, request: FindRequest): Maybe<FindResult> {
  const coll = ctx.engine.collection(ctx.db, name);
  if (coll?.isView) {
    return then(findInView(ctx.engine, ctx.db, coll, request), (docs) => ({
      docs,
      stats: { stage: 'COLLSCAN', inMemorySort: true, keysExamined: 0, docsExamined: docs.length, nReturned: docs.length },
    }));
  }
  return findDocuments(coll, request);
}

/** Find with its projection, as used by `find` and `explain`. */
export function runFind(ctx: CommandContext) {
  const name = collectionName(ctx, 'find');
  const body = ctx.body;
  for (const opt of REFUSED_FIND_OPTIONS)
    if (body[opt] !== undefined && body[opt] !== false) throw notSupported(`find option '${opt}' is not supported by the embedded engine`);
  const rawLimit = body.limit === undefined || body.limit === null ? 0 : toNumber(body.limit);
  if (!Number.isInteger(rawLimit)) throw typeMismatch(`Field 'limit' should be an integer, but found: ${String(body.limit)}`);
  const coll = ctx.engine.collection(ctx.db, name);
  const tailable = body.tailable === true;
  if (tailable && !coll?.options.capped) throw badValue(`error processing query: ${ctx.db}.${name} tailable cursor requested on non capped collection`);
  if (tailable && body.sort && Object.keys(body.sort).length) throw badValue('error processing query: tailable cursors cannot be sorted');
  // A negative limit is the legacy way of asking for a single batch.
  const singleBatch = body.singleBatch === true || rawLimit < 0;
  const request = { ...findRequest(ctx, name, 'filter'), limit: Math.abs(rawLimit) };
  return then(readDocuments(ctx, name, request), (result) => {
    const scoreOf = result.scores ? (doc: Document) => result.scores!.get(doc) ?? 0 : undefined;
    const evalOptions = { collation: request.collation, variables: request.variables };
    const projection = compileProjection(optionalDocument(body, 'projection'), request.filter, evalOptions, scoreOf);
    return { name, coll, singleBatch, projection, tailable, request, ...result };
  });
}

const find: CommandHandler = (ctx) =>
  then(runFind(ctx), ({ name, coll, singleBatch, projection, docs, tailable, request }) => {
    const ns = `${ctx.db}.${name}`;
    const tail = tailable ? { collection: coll!, request } : undefined;
    // A collection's documents are its stored ones; a view's are computed.
    const stored = !coll?.isView;
    const batch = ctx.engine.cursors.open(ns, docs, optionalCount(ctx.body, 'batchSize'), projection, singleBatch, tail, stored);
    return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
  });

export const toCursorId = (v: unknown): Long => (v instanceof Long ? v : Long.fromNumber(toNumber(v)));

const getMore: CommandHandler = (ctx) => {
  const id = toCursorId(ctx.body.getMore);
  const coll = ctx.body.collection;
  if (typeof coll !== 'string') throw typeMismatch("BSON field 'getMore.collection' is missing or not a string");
  const ns = `${ctx.db}.${coll}`;
  const batch = ctx.engine.cursors.more(id, ns, optionalCount(ctx.body, 'batchSize'));
  if (!batch) throw new MongoCommandError(43, `cursor id ${id.toString()} not found`);
  return { cursor: { nextBatch: batch.docs, id: batch.cursorId, ns } };
};

const killCursors: CommandHandler = (ctx) => {
  collectionName(ctx, 'killCursors');
  const ids = ctx.body.cursors;
  if (!Array.isArray(ids)) throw typeMismatch("BSON field 'killCursors.cursors' is missing or not an array");
  const killed: Long[] = [];
  const notFound: Long[] = [];
  for (const raw of ids) {
    const id = toCursorId(raw);
    (ctx.engine.cursors.kill(id) ? killed : notFound).push(id);
  }
  return { cursorsKilled: killed, cursorsNotFound: notFound, cursorsAlive: [], cursorsUnknown: [] };
};

const count: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'count');
  const request = { ...findRequest(ctx, name, 'query'), limit: optionalCount(ctx.body, 'limit'), countOnly: true };
  return then(readDocuments(ctx, name, request), (result) => ({ n: result.count ?? result.docs.length }));
};

const distinct: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'distinct');
  const key = ctx.body.key;
  if (typeof key !== 'string' || !key) throw badValue("BSON field 'distinct.key' is missing or not a string");
  const request = findRequest(ctx, name, 'query');
  return then(readDocuments(ctx, name, request), ({ docs }) => distinctValues(docs, key, request));
};

function distinctValues(docs: Document[], key: string, request: FindRequest): Document {
  const parts = key.split('.');
  const values: unknown[] = [];
  for (const doc of docs) {
    for (const v of pathValues(doc, parts).values) {
      // Missing fields and empty arrays contribute no value.
      if (v !== undefined && !(Array.isArray(v) && v.length === 0)) values.push(v);
    }
  }
  const cmp = (a: unknown, b: unknown) => compareBson(a, b, request.collation);
  values.sort(cmp);
  return { values: values.filter((v, i) => i === 0 || cmp(v, values[i - 1]) !== 0) };
}

export const readCommands: Record<string, CommandHandler> = { find, getMore, killCursors, count, distinct };
