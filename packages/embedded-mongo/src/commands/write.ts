/**
 * Write commands: insert, update, delete. Per-statement failures become `writeErrors` (ordered writes stop at the
 * first one, unordered carry on), with MongoDB's fields: `index`, `code`, `errmsg`, plus `keyPattern`/`keyValue`
 * for duplicate keys and `errInfo` for validation failures. Statements are checked against MongoDB 7.0's fields:
 * an unknown one (such as `sort` on an update, which 8.0 added) is refused, not ignored.
 */
import type { Document } from 'bson';
import { isPlainObject, toNumber } from '../bson-values.js';
import { fromMingoError, MongoCommandError, typeMismatch } from '../errors.js';
import { evaluateVariables } from '../query/mingo.js';
import { withIdFirst } from '../query/update.js';
import { then, type Maybe } from '../query/work.js';
import { collectionName, letVariables, optionalDocument, writableCollection, type CommandContext, type CommandHandler } from './context.js';
import { checkId, checkMeasurement, checkSize, validateDocument } from './validation.js';
import { refuseView } from './views.js';
import { performDelete, performUpdate } from './write-ops.js';

const UPDATE_FIELDS = new Set(['q', 'u', 'c', 'upsert', 'multi', 'arrayFilters', 'hint', 'collation', 'upsertSupplied', 'sampleId']);
const DELETE_FIELDS = new Set(['q', 'limit', 'hint', 'collation', 'sampleId']);

function statements(ctx: CommandContext, field: string): Document[] {
  const list = ctx.body[field];
  if (!Array.isArray(list)) throw typeMismatch(`BSON field '${field}' is missing or not an array`);
  for (const s of list) if (!isPlainObject(s)) throw typeMismatch(`BSON field '${field}' must contain only objects`);
  return list as Document[];
}

function checkFields(command: string, field: string, statement: Document, allowed: Set<string>): void {
  const unknown = Object.keys(statement).find((k) => !allowed.has(k));
  if (unknown) throw new MongoCommandError(40415, `BSON field '${command}.${field}.${unknown}' is an unknown field.`);
}

/**
 * Runs `fn` for each statement in order, collecting write errors per MongoDB's ordered/unordered rules; a statement
 * that gives up the thread (query/work.ts) is awaited before the next one starts.
 */
function eachStatement(ctx: CommandContext, list: Document[], fn: (s: Document, index: number) => Maybe<void>): Maybe<Document[]> {
  const ordered = ctx.body.ordered !== false;
  const writeErrors: Document[] = [];
  /** Records a statement's error; false when the statements stop there. */
  const failed = (i: number, err: unknown): boolean => {
    // A command-level interruption ends the whole command, as in MongoDB.
    if (err instanceof MongoCommandError && (err.code === 50 || err.code === 279)) throw err;
    const e = fromMingoError(err);
    writeErrors.push({ index: i, code: e.code, errmsg: e.message, ...e.extra });
    return !ordered;
  };
  const from = (start: number): Maybe<Document[]> => {
    for (let i = start; i < list.length; i++) {
      let pending: Maybe<void>;
      try {
        pending = fn(list[i], i);
      } catch (err) {
        if (!failed(i, err)) break;
        continue;
      }
      if (pending instanceof Promise)
        return pending.then(
          () => from(i + 1),
          (err: unknown) => (failed(i, err) ? from(i + 1) : writeErrors),
        );
    }
    return writeErrors;
  };
  return from(0);
}

const withErrors = (reply: () => Document, writeErrors: Maybe<Document[]>) =>
  then(writeErrors, (errors) => (errors.length ? { ...reply(), writeErrors: errors } : reply()));

const bypass = (body: Document) => body.bypassDocumentValidation === true;

const insert: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'insert');
  const docs = statements(ctx, 'documents');
  refuseView(ctx.engine.collection(ctx.db, name), '');
  let n = 0;
  const writeErrors = eachStatement(ctx, docs, (raw) => {
    // The incoming document was just decoded from this message: nobody else holds it, so it is stored as is.
    const doc = withIdFirst(raw);
    checkId(doc);
    checkSize(doc, true);
    const coll = writableCollection(ctx, name);
    checkMeasurement(coll, doc);
    validateDocument(coll, doc, undefined, bypass(ctx.body));
    coll.insert(doc);
    n++;
  });
  return withErrors(() => ({ n }), writeErrors);
};

const update: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'update');
  const list = statements(ctx, 'updates');
  const variables = letVariables(ctx.body);
  let n = 0;
  let nModified = 0;
  const upserted: Document[] = [];
  const writeErrors = eachStatement(ctx, list, (s, index) => {
    checkFields('update', 'updates', s, UPDATE_FIELDS);
    const r = performUpdate(ctx.engine, ctx.db, name, {
      filter: (s.q as Document) ?? {},
      update: s.u as Document,
      upsert: s.upsert === true,
      multi: s.multi === true,
      arrayFilters: s.arrayFilters as Document[] | undefined,
      hint: s.hint,
      collation: optionalDocument(s, 'collation'),
      // Statement constants (`c`) join the command's `let` variables.
      variables: s.c ? { ...variables, ...evaluateVariables(optionalDocument(s, 'c')) } : variables,
      bypassValidation: bypass(ctx.body),
    }, ctx.work);
    return then(r, (result) => {
      n += result.matched;
      nModified += result.modified;
      if (result.upsertedId !== undefined) {
        n++;
        upserted.push({ index, _id: result.upsertedId });
      }
    });
  });
  return withErrors(() => ({ n, nModified, ...(upserted.length ? { upserted } : {}) }), writeErrors);
};

const deleteCommand: CommandHandler = (ctx) => {
  const name = collectionName(ctx, 'delete');
  const list = statements(ctx, 'deletes');
  const variables = letVariables(ctx.body);
  let n = 0;
  const writeErrors = eachStatement(ctx, list, (s) => {
    checkFields('delete', 'deletes', s, DELETE_FIELDS);
    const limit = toNumber(s.limit ?? 0);
    if (limit !== 0 && limit !== 1) throw typeMismatch(`The limit field in delete objects must be 0 or 1. Got ${limit}`);
    const stmt = { filter: (s.q as Document) ?? {}, justOne: limit === 1, hint: s.hint, collation: optionalDocument(s, 'collation'), variables };
    return then(performDelete(ctx.engine, ctx.db, name, stmt, ctx.work), (deleted) => {
      n += deleted.length;
    });
  });
  return withErrors(() => ({ n }), writeErrors);
};

export const writeCommands: Record<string, CommandHandler> = { insert, update, delete: deleteCommand };
