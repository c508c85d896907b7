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
  return withErrors({ n }, writeErrors);
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
      deadline: ctx.deadline,
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
  const variables = letVariables(ctx.body);
  let n = 0;
  const writeErrors = eachStatement(ctx, list, (s) => {
    checkFields('delete', 'deletes', s, DELETE_FIELDS);
    const limit = toNumber(s.limit ?? 0);
    if (limit !== 0 && limit !== 1) throw typeMismatch(`The limit field in delete objects must be 0 or 1. Got ${limit}`);
    const stmt = { filter: (s.q as Document) ?? {}, justOne: limit === 1, hint: s.hint, collation: optionalDocument(s, 'collation'), variables, deadline: ctx.deadline };
    n += performDelete(ctx.engine, ctx.db, name, stmt).length;
  });
  return withErrors({ n }, writeErrors);
};

export const writeCommands: Record<string, CommandHandler> = { insert, update, delete: deleteCommand };
