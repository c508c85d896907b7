/** Read commands: find, getMore, killCursors, count, distinct. */
import { Long, type Document } from 'bson';
import { compareBson, toNumber } from '../bson-values.js';
import { badValue, MongoCommandError, notSupported, typeMismatch } from '../errors.js';
import { compileProjection } from '../query/mingo.js';
import { pathValues } from '../query/paths.js';
import { findDocuments, type FindRequest } from '../query/planner.js';
import { collectionName, optionalCount, optionalDocument, type CommandContext, type CommandHandler } from './context.js';

/** Options MongoDB accepts on find that would change results here if silently ignored. */
const REFUSED_FIND_OPTIONS = ['tailable', 'awaitData', 'min', 'max', 'returnKey', 'showRecordId'];

/** Only the binary ("simple") collation is implemented; any other would silently compare strings differently. */
export function checkCollation(body: Document): void {
  const c = body.collation as Document | undefined;
  if (c && c.locale !== 'simple') throw notSupported(`collation ${JSON.stringify(c)} is not supported by the embedded engine (only { locale: 'simple' })`);
}

export function findRequest(body: Document, filterField: string): FindRequest {
  checkCollation(body);
  return {
    filter: optionalDocument(body, filterField),
    sort: optionalDocument(body, 'sort'),
    skip: optionalCount(body, 'skip'),
    hint: body.hint ?? undefined,
  };
}

/** Find with its projection, as used by `find` and `explain`. */
export function runFind(ctx: CommandContext) {
  const name = collectionName(ctx, 'find');
  const body = ctx.body;
  for (const opt of REFUSED_FIND_OPTIONS)
    if (body[opt] !== undefined && body[opt] !== false) throw notSupported(`find option '${opt}' is not supported by the embedded engine`);
  const rawLimit = body.limit === undefined || body.limit === null ? 0 : toNumber(body.limit);
  if (!Number.isInteger(rawLimit)) throw typeMismatch(`Field 'limit' should be an integer, but found: ${String(body.limit)}`);
  // A negative limit is the legacy way of asking for a single batch.
  const singleBatch = body.singleBatch === true || rawLimit < 0;
  const request = { ...findRequest(body, 'filter'), limit: Math.abs(rawLimit) };
  const projection = compileProjection(optionalDocument(body, 'projection'), request.filter);
  const result = findDocuments(ctx.engine.collection(ctx.db, name), request);
  return { name, singleBatch, projection, ...result };
}

const find: CommandHandler = (ctx) => {
  const { name, singleBatch, projection, docs } = runFind(ctx);
  const ns = `${ctx.db}.${name}`;
  const batch = ctx.engine.cursors.open(ns, docs, optionalCount(ctx.body, 'batchSize'), projection, singleBatch);
  return { cursor: { firstBatch: batch.docs, id: batch.cursorId, ns } };
};

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
  const request = { ...findRequest(ctx.body, 'query'), limit: optionalCount(ctx.body, 'limit') };
  return { n: findDocuments(ctx.engine.collection(ctx.db, name), request).docs.length };
};

const distinct: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'distinct');
  const key = ctx.body.key;
  if (typeof key !== 'string' || !key) throw badValue("BSON field 'distinct.key' is missing or not a string");
  const { docs } = findDocuments(ctx.engine.collection(ctx.db, name), findRequest(ctx.body, 'query'));
  const parts = key.split('.');
  const values: unknown[] = [];
  for (const doc of docs) {
    for (const v of pathValues(doc, parts).values) {
      // Missing fields and empty arrays contribute no value.
      if (v !== undefined && !(Array.isArray(v) && v.length === 0)) values.push(v);
    }
  }
  values.sort(compareBson);
  return { values: values.filter((v, i) => i === 0 || compareBson(v, values[i - 1]) !== 0) };
};

export const readCommands: Record<string, CommandHandler> = { find, getMore, killCursors, count, distinct };
