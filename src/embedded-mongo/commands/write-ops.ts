/**
 * Document-level write operations shared by `update`, `delete` and `findAndModify`. Multi-document writes apply
 * document by document like MongoDB (an error stops the statement, earlier documents stay written); each single
 * document write is all-or-nothing because uniqueness is checked before the collection is touched.
 */
import type { Document } from 'bson';
import { failedToParse } from '../errors.js';
import type { CollectionReader } from '../query/mingo.js';
import { findDocuments } from '../query/planner.js';
import { applyUpdate, updateKind, upsertSeed, withIdFirst } from '../query/update.js';
import type { Engine } from '../storage/engine.js';

export interface UpdateStatement {
  filter: Document;
  update: Document | Document[];
  upsert: boolean;
  multi: boolean;
  arrayFilters?: Document[];
  sort?: Document;
  hint?: unknown;
}

export interface UpdateResult {
  matched: number;
  modified: number;
  upsertedId?: unknown;
  /** The (last) matched document before and after the update, or the upserted document. */
  before?: Document;
  after?: Document;
}

/** Reads a sibling collection of `db` (for $lookup and friends); an unknown collection reads as empty. */
export const collectionReader =
  (engine: Engine, db: string): CollectionReader =>
  (name) => [...(engine.collection(db, name)?.docs.values() ?? [])];

export function performUpdate(engine: Engine, db: string, name: string, stmt: UpdateStatement): UpdateResult {
  const kind = updateKind(stmt.update);
  if (kind === 'replacement' && stmt.multi) throw failedToParse('multi update is not supported for replacement-style update');
  const readCollection = collectionReader(engine, db);
  const coll = engine.collection(db, name);
  const { docs } = findDocuments(coll, { filter: stmt.filter, sort: stmt.sort, limit: stmt.multi ? 0 : 1, hint: stmt.hint });
  if (docs.length === 0) {
    if (!stmt.upsert) return { matched: 0, modified: 0 };
    // A replacement upsert keeps only the filter's _id; operator and pipeline upserts start from its equalities.
    const seed = kind === 'replacement' ? upsertSeed(stmt.filter._id === undefined ? {} : { _id: stmt.filter._id }) : upsertSeed(stmt.filter);
    const { doc } = applyUpdate(seed, stmt.update, kind, { arrayFilters: stmt.arrayFilters, inserting: true, readCollection });
    const inserted = withIdFirst(doc);
    engine.db(db).ensure(name).insert(inserted);
    return { matched: 0, modified: 0, upsertedId: inserted._id, after: inserted };
  }
  const result: UpdateResult = { matched: docs.length, modified: 0 };
  for (const doc of docs) {
    const r = applyUpdate(doc, stmt.update, kind, { arrayFilters: stmt.arrayFilters, query: stmt.filter, inserting: false, readCollection });
    if (r.changed) {
      coll!.replace(doc, r.doc);
      result.modified++;
    }
    result.before = doc;
    result.after = r.changed ? r.doc : doc;
  }
  return result;
}

/** Deletes the matching documents (at most one when `justOne`); returns them. */
export function performDelete(engine: Engine, db: string, name: string, filter: Document, justOne: boolean, sort?: Document, hint?: unknown): Document[] {
  const coll = engine.collection(db, name);
  if (!coll) return [];
  const { docs } = findDocuments(coll, { filter, sort, limit: justOne ? 1 : 0, hint });
  for (const doc of docs) coll.delete(doc);
  return docs;
}
