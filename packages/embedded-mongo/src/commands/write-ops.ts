/**
 * Document-level write operations shared by `update`, `delete` and `findAndModify`. Multi-document writes apply
 * document by document like MongoDB (an error stops the statement, earlier documents stay written); each single
 * document write is all-or-nothing because size, validator and uniqueness are checked before the collection is touched.
 */
import type { Document } from 'bson';
import { failedToParse } from '../errors.js';
import { findDocuments } from '../query/planner.js';
import { applyUpdate, updateKind, upsertSeed, withIdFirst } from '../query/update.js';
import type { Engine } from '../storage/engine.js';
import { collationFor } from './context.js';
import { checkId, checkSize, validateDocument } from './validation.js';
import { collectionReader, refuseView } from './views.js';

export interface UpdateStatement {
  filter: Document;
  update: Document | Document[];
  upsert: boolean;
  multi: boolean;
  arrayFilters?: Document[];
  sort?: Document;
  hint?: unknown;
  /** The statement's collation document (absent: the collection's default). */
  collation?: Document;
  /** Evaluated `let` variables. */
  variables?: Document;
  bypassValidation?: boolean;
  deadline?: number;
}

export interface UpdateResult {
  matched: number;
  modified: number;
  upsertedId?: unknown;
  /** The (last) matched document before and after the update, or the upserted document. */
  before?: Document;
  after?: Document;
}

export function performUpdate(engine: Engine, db: string, name: string, stmt: UpdateStatement): UpdateResult {
  const kind = updateKind(stmt.update);
  if (kind === 'replacement' && stmt.multi) throw failedToParse('multi update is not supported for replacement-style update');
  const readCollection = collectionReader(engine, db);
  const coll = engine.collection(db, name);
  refuseView(coll, '');
  const collation = collationFor(stmt, coll);
  const evalOptions = { collation, variables: stmt.variables };
  const { docs } = findDocuments(coll, {
    filter: stmt.filter,
    sort: stmt.sort,
    limit: stmt.multi ? 0 : 1,
    hint: stmt.hint,
    collation,
    variables: stmt.variables,
    deadline: stmt.deadline,
  });
  const options = { arrayFilters: stmt.arrayFilters, readCollection, evalOptions };
  if (docs.length === 0) {
    if (!stmt.upsert) return { matched: 0, modified: 0 };
    // A replacement upsert keeps only the filter's _id; operator and pipeline upserts start from its equalities.
    const seed = kind === 'replacement' ? upsertSeed(stmt.filter._id === undefined ? {} : { _id: stmt.filter._id }) : upsertSeed(stmt.filter);
    const { doc } = applyUpdate(seed, stmt.update, kind, { ...options, inserting: true });
    const inserted = withIdFirst(doc);
    checkId(inserted);
    checkSize(inserted, false);
    validateDocument(coll, inserted, undefined, stmt.bypassValidation === true);
    engine.db(db).ensure(name).insert(inserted);
    return { matched: 0, modified: 0, upsertedId: inserted._id, after: inserted };
  }
  const result: UpdateResult = { matched: docs.length, modified: 0 };
  for (const doc of docs) {
    const r = applyUpdate(doc, stmt.update, kind, { ...options, query: stmt.filter, inserting: false });
    if (r.changed) {
      checkSize(r.doc, false);
      validateDocument(coll, r.doc, doc, stmt.bypassValidation === true);
      coll!.replace(doc, r.doc);
      result.modified++;
    }
    result.before = doc;
    result.after = r.changed ? r.doc : doc;
  }
  return result;
}

export interface DeleteStatement {
  filter: Document;
  justOne: boolean;
  sort?: Document;
  hint?: unknown;
  collation?: Document;
  variables?: Document;
  deadline?: number;
}

/** Deletes the matching documents (at most one when `justOne`); returns them. */
export function performDelete(engine: Engine, db: string, name: string, stmt: DeleteStatement): Document[] {
  const coll = engine.collection(db, name);
  refuseView(coll, '');
  if (!coll) return [];
  const { docs } = findDocuments(coll, {
    filter: stmt.filter,
    sort: stmt.sort,
    limit: stmt.justOne ? 1 : 0,
    hint: stmt.hint,
    collation: collationFor(stmt, coll),
    variables: stmt.variables,
    deadline: stmt.deadline,
  });
  for (const doc of docs) coll.delete(doc);
  return docs;
}
