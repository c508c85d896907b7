/**
 * Write commands: insert, update, delete. Per-statement failures become `writeErrors` (ordered writes stop at the
 * first one, unordered carry on), with MongoDB's fields: `index`, `code`, `errmsg`, plus `keyPattern`/`keyValue`
 * for duplicate keys.
 */
import type { Document } from 'bson';
import { isPlainObject, toNumber } from '../bson-values.js';
import { fromMingoError, typeMismatch } from '../errors.js';
import { withIdFirst } from '../query/update.js';
import { checkCollation } from './read.js';
import { collectionName, type CommandContext, type CommandHandler } from './context.js';
import { performDelete, performUpdate } from './write-ops.js';

function statements(ctx: CommandContext, field: string): Document[] {
  const list = ctx.body[field];
  if (!Array.isArray(list)) throw typeMismatch(`BSON field '${field}' is missing or not an array`);
  for (const s of list) if (!isPlainObject(s)) throw typeMismatch(`BSON field '${field}' must contain only objects`);
  return list as Document[];
}

/** Runs `fn` for each statement, collecting write errors per MongoDB's ordered/unordered rules. */
function eachStatement(ctx: CommandContext, list: Document[], fn: (s: Document, index: number) => void): Document[] {
  const ordered = ctx.body.ordered !== false;
  const writeErrors: Document[] = [];
  for (let i = 0; i < list.length; i++) {
    try {
      fn(list[i], i);
    } catch (err) {
      const e = fromMingoError(err);
      writeErrors.push({ index: i, code: e.code, errmsg: e.message, ...e.extra });
      if (ordered) break;
    }
  }
  return writeErrors;
}

const withErrors = (reply: Document, writeErrors: Document[]) => (writeErrors.length ? { ...reply, writeErrors } : reply);

const insert: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'insert');
  const docs = statements(ctx, 'documents');
  let n = 0;
  const writeErrors = eachStatement(ctx, docs, (doc) => {
    // The incoming document was just decoded from this message: nobody else holds it, so it is stored as is.
    ctx.engine.db(ctx.db).ensure(name).insert(withIdFirst(doc));
    n++;
  });
  return withErrors({ n }, writeErrors);
};

const update: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'update');
  const list = statements(ctx, 'updates');
  let n = 0;
  let nModified = 0;
  const upserted: Document[] = [];
  const writeErrors = eachStatement(ctx, list, (s, index) => {
    checkCollation(s);
    const r = performUpdate(ctx.engine, ctx.db, name, {
      filter: (s.q as Document) ?? {},
      update: s.u as Document,
      upsert: s.upsert === true,
      multi: s.multi === true,
      arrayFilters: s.arrayFilters as Document[] | undefined,
      hint: s.hint,
    });
    n += r.matched;
    nModified += r.modified;
    if (r.upsertedId !== undefined) {
      n++;
      upserted.push({ index, _id: r.upsertedId });
    }
  });
  return withErrors({ n, nModified, ...(upserted.length ? { upserted } : {}) }, writeErrors);
};

const deleteCommand: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'delete');
  const list = statements(ctx, 'deletes');
  let n = 0;
  const writeErrors = eachStatement(ctx, list, (s) => {
    checkCollation(s);
    const limit = toNumber(s.limit ?? 0);
    if (limit !== 0 && limit !== 1) throw typeMismatch(`The limit field in delete objects must be 0 or 1. Got ${limit}`);
    n += performDelete(ctx.engine, ctx.db, name, (s.q as Document) ?? {}, limit === 1, undefined, s.hint).length;
  });
  return withErrors({ n }, writeErrors);
};

export const writeCommands: Record<string, CommandHandler> = { insert, update, delete: deleteCommand };
