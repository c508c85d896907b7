/**
 * findAndModify: one document selected by `query` and `sort`, then updated (optionally upserted) or removed.
 * Answers `{ lastErrorObject: { n, updatedExisting, upserted? }, value }`; errors such as duplicate keys are
 * command errors (not write errors), as in MongoDB.
 */
import type { Document } from 'bson';
import { failedToParse } from '../errors.js';
import { compileProjection } from '../query/projection.js';
import { then } from '../query/work.js';
import { collationFor, collectionName, letVariables, optionalDocument, type CommandHandler } from './context.js';
import { performDelete, performUpdate } from './write-ops.js';

const findAndModify: CommandHandler = (ctx) => {
  const body = ctx.body;
  const name = collectionName(ctx, 'findAndModify' in body ? 'findAndModify' : 'findandmodify');
  const query = optionalDocument(body, 'query') ?? {};
  const sort = optionalDocument(body, 'sort');
  const remove = body.remove === true;
  const update = body.update as Document | Document[] | undefined;
  if (remove && update !== undefined) throw failedToParse('Cannot specify both an update and remove=true');
  if (!remove && update === undefined) throw failedToParse('Either an update or remove=true must be specified');
  if (remove && body.upsert === true) throw failedToParse('Cannot specify both upsert=true and remove=true');
  if (remove && body.new === true)
    throw failedToParse("Cannot specify both new=true and remove=true; 'remove' always returns the deleted document");
  const variables = letVariables(body);
  const collationSpec = optionalDocument(body, 'collation');
  const collation = collationFor(body, ctx.engine.collection(ctx.db, name));
  // The projection reads the query only for a positional (`a.$`) field (the post-image may no longer match it).
  const project = compileProjection(optionalDocument(body, 'fields'), query, { collation, variables });
  const out = (doc: Document | undefined) => (doc ? (project ? project([doc])[0] : doc) : null);

  if (remove) {
    const removed = performDelete(ctx.engine, ctx.db, name, { filter: query, justOne: true, sort, hint: body.hint, collation: collationSpec, variables }, ctx.work);
    return then(removed, ([doc]) => ({ lastErrorObject: { n: doc ? 1 : 0 }, value: out(doc) }));
  }
  const updated = performUpdate(ctx.engine, ctx.db, name, {
    filter: query,
    update: update!,
    upsert: body.upsert === true,
    multi: false,
    arrayFilters: body.arrayFilters as Document[] | undefined,
    sort,
    hint: body.hint,
    collation: collationSpec,
    variables,
    bypassValidation: body.bypassDocumentValidation === true,
  }, ctx.work);
  return then(updated, (r) => {
    if (r.upsertedId !== undefined)
      return { lastErrorObject: { n: 1, updatedExisting: false, upserted: r.upsertedId }, value: body.new === true ? out(r.after) : null };
    if (r.matched === 0) return { lastErrorObject: { n: 0, updatedExisting: false }, value: null };
    return { lastErrorObject: { n: 1, updatedExisting: true }, value: out(body.new === true ? r.after : r.before) };
  });
};

export const findAndModifyCommands: Record<string, CommandHandler> = { findAndModify, findandmodify: findAndModify };
