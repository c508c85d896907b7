/**
 * Document-level write operations shared by `update`, `delete` and `findAndModify`. Multi-document writes apply
 * document by document like MongoDB (an error stops the statement, earlier documents stay written); each single
 * document write is all-or-nothing because size, validator and uniqueness are checked before the collection is touched.
 */
import type { Document } from 'bson';
import { failedToParse } from '../errors.js';
import { hasRegex } from '../query/guard.js';
import { compileFilter, type EvalOptions, type Matcher } from '../query/mingo.js';
import { findDocuments } from '../query/planner.js';
import { applyUpdate, updateKind, upsertSeed, withIdFirst } from '../query/update.js';
import { then, type Maybe, type Task, type Work } from '../query/work.js';
import type { Collection } from '../storage/collection.js';
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
}

export interface UpdateResult {
  matched: number;
  modified: number;
  upsertedId?: unknown;
  /** The (last) matched document before and after the update, or the upserted document. */
  before?: Document;
  after?: Document;
}

export function performUpdate(engine: Engine, db: string, name: string, stmt: UpdateStatement, work: Work): Maybe<UpdateResult> {
  const kind = updateKind(stmt.update);
  if (kind === 'replacement' && stmt.multi) throw failedToParse('multi update is not supported for replacement-style update');
  const readCollection = collectionReader(engine, db);
  const coll = engine.collection(db, name);
  refuseView(coll, '');
  const collation = collationFor(stmt, coll);
  const evalOptions = { collation, variables: stmt.variables };
  const selected = findDocuments(coll, {
    filter: stmt.filter,
    sort: stmt.sort,
    limit: stmt.multi ? 0 : 1,
    hint: stmt.hint,
    collation,
    variables: stmt.variables,
    work,
  });
  const options = { arrayFilters: stmt.arrayFilters, readCollection, evalOptions };
  return then(selected, ({ docs }) => {
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
    /** The new version of one selected document (pure: the stored one is not touched); null when unchanged. */
    const compute = (doc: Document): Document | null => {
      const r = applyUpdate(doc, stmt.update, kind, { ...options, query: stmt.filter, inserting: false });
      if (!r.changed) return null;
      checkSize(r.doc, false, doc);
      validateDocument(coll, r.doc, doc, stmt.bypassValidation === true);
      return r.doc;
    };
    const guarded = hasRegex(stmt.update) || hasRegex(stmt.arrayFilters) || hasRegex(coll!.options.validator);
    const updates = new UpdateComputation(docs, compute);
    return then(work.run(updates, guarded), () => commit(coll!, stmt.filter, evalOptions, updates, (task, filterRegexes) => work.runNow(task, guarded || filterRegexes)));
  });
}

/** A selected document and its new version: null when the update changes nothing, undefined when it no longer matches. */
interface PlannedUpdate {
  doc: Document;
  next: Document | null | undefined;
}

/**
 * The new versions of the selected documents, computed as a task (query/work.ts) so that an update whose evaluation
 * is long (regexes in `$pull`, array filters or the validator) gives up the thread between documents. An error stops
 * it; the documents computed before it are still written, as MongoDB writes a multi-update document by document.
 */
class UpdateComputation implements Task {
  readonly planned: PlannedUpdate[] = [];
  error: unknown;
  private at = 0;

  constructor(
    private readonly docs: Document[],
    readonly compute: (doc: Document) => Document | null | undefined,
  ) {}

  step(until: number, maxItems: number): boolean {
    for (let n = 0; this.at < this.docs.length; n++) {
      if (n >= maxItems || (n > 0 && performance.now() >= until)) return false;
      const doc = this.docs[this.at];
      try {
        this.planned.push({ doc, next: this.compute(doc) });
      } catch (error) {
        this.error = error;
        return true;
      }
      this.at++;
    }
    return true;
  }
}

/**
 * Writes the computed versions in one turn. A document another command changed while this one waited for its turn
 * is tested against the filter again and, still matching, updated from its current version (as MongoDB does after a
 * write conflict); a deleted one is skipped.
 */
function commit(
  coll: Collection,
  filter: Document,
  evalOptions: EvalOptions,
  updates: UpdateComputation,
  runNow: (task: Task, filterRegexes: boolean) => void,
): UpdateResult {
  const result: UpdateResult = { matched: 0, modified: 0 };
  let matcher: Matcher | undefined;
  for (const planned of updates.planned) {
    let { doc, next } = planned;
    const current = coll.docs.get(coll.keyOf(doc));
    if (!current) continue;
    if (current !== doc) {
      const test = (matcher ??= compileFilter(filter, evalOptions));
      const again = new UpdateComputation([current], (d) => (test.test(d) ? updates.compute(d) : undefined));
      runNow(again, test.guarded === true);
      if (again.error !== undefined) throw again.error;
      next = again.planned[0].next;
      if (next === undefined) continue;
      doc = current;
    }
    result.matched++;
    if (next) {
      coll.replace(doc, next);
      result.modified++;
    }
    result.before = doc;
    result.after = next ?? doc;
  }
  if (updates.error !== undefined) throw updates.error;
  return result;
}

export interface DeleteStatement {
  filter: Document;
  justOne: boolean;
  sort?: Document;
  hint?: unknown;
  collation?: Document;
  variables?: Document;
}

/**
 * Deletes the matching documents (at most one when `justOne`); returns them. A document another command changed while
 * this one waited for its turn is deleted only if it still matches.
 */
export function performDelete(engine: Engine, db: string, name: string, stmt: DeleteStatement, work: Work): Maybe<Document[]> {
  const coll = engine.collection(db, name);
  refuseView(coll, '');
  if (!coll) return [];
  const collation = collationFor(stmt, coll);
  const selected = findDocuments(coll, { filter: stmt.filter, sort: stmt.sort, limit: stmt.justOne ? 1 : 0, hint: stmt.hint, collation, variables: stmt.variables, work });
  return then(selected, ({ docs }) => {
    const deleted: Document[] = [];
    let matcher: Matcher | undefined;
    for (const doc of docs) {
      let current = coll.docs.get(coll.keyOf(doc));
      if (current && current !== doc) {
        const test = (matcher ??= compileFilter(stmt.filter, { collation, variables: stmt.variables }));
        let matches = false;
        work.runNow({ step: () => ((matches = test.test(current!)), true) }, test.guarded === true);
        if (!matches) current = undefined;
      }
      if (!current) continue;
      coll.delete(current);
      deleted.push(current);
    }
    return deleted;
  });
}
