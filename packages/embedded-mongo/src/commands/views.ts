/**
 * Views (`create` with `viewOn` and `pipeline`): a read of a view runs the view's pipeline (and those of the views it
 * is defined on) over the source collection, then the read's own filter, sort, skip and limit, as MongoDB does.
 * Views hold no documents and refuse writes and indexes (166 CommandNotSupportedOnView).
 */
import type { Document } from 'bson';
import { cloneDoc } from '../bson-values.js';
import { MongoCommandError } from '../errors.js';
import { plainNumbers } from '../query/doubles.js';
import { runPipeline, runPipelineWork, type CollectionReader } from '../query/mingo.js';
import type { FindRequest } from '../query/planner.js';
import type { Maybe, Work } from '../query/work.js';
import type { Collection } from '../storage/collection.js';
import type { Engine } from '../storage/engine.js';

const MAX_VIEW_DEPTH = 20;

export interface ResolvedView {
  /** The collection the view chain ends on (undefined when it does not exist: an empty source). */
  source: Collection | undefined;
  /** The pipelines of the chain, source first. */
  pipeline: Document[];
}

/** Resolves a view to its source collection and the combined pipeline. */
export function resolveView(engine: Engine, db: string, view: Collection): ResolvedView {
  const pipeline: Document[] = [];
  let current: Collection | undefined = view;
  for (let depth = 0; current?.isView; depth++) {
    if (depth >= MAX_VIEW_DEPTH) throw new MongoCommandError(165, `View depth too deep or view cycle detected; maximum depth is ${MAX_VIEW_DEPTH}`);
    pipeline.unshift(...((current.options.pipeline as Document[] | undefined) ?? []));
    current = engine.collection(db, current.options.viewOn as string);
  }
  return { source: current, pipeline };
}

const copy = (d: Document) => cloneDoc(plainNumbers(d));

/**
 * Runs `pipeline` after the view's own pipeline, over copies of the source documents; as part of a command's `work`
 * (in turns, see query/work.ts) when one is given.
 */
export function aggregateView(engine: Engine, db: string, view: Collection, pipeline: Document[], variables?: Document): Document[];
export function aggregateView(engine: Engine, db: string, view: Collection, pipeline: Document[], variables: Document | undefined, work: Work): Maybe<Document[]>;
export function aggregateView(engine: Engine, db: string, view: Collection, pipeline: Document[], variables?: Document, work?: Work): Maybe<Document[]> {
  const { source, pipeline: viewPipeline } = resolveView(engine, db, view);
  const stored = [...(source?.docs.values() ?? [])];
  const stages = [...viewPipeline, ...pipeline];
  const options = { collation: view.collator, variables };
  if (work) return runPipelineWork(stored, copy, stages, collectionReader(engine, db), options, work);
  return runPipeline(stored.map(copy), stages, collectionReader(engine, db), options);
}

/** A find-style read of a view: the view's documents matching the request, sorted, skipped and limited. */
export function findInView(engine: Engine, db: string, view: Collection, req: FindRequest): Maybe<Document[]> {
  const stages: Document[] = [];
  if (req.filter && Object.keys(req.filter).length) stages.push({ $match: req.filter });
  if (req.sort && Object.keys(req.sort).length) stages.push({ $sort: req.sort });
  if (req.skip) stages.push({ $skip: req.skip });
  if (req.limit) stages.push({ $limit: req.limit });
  return req.work ? aggregateView(engine, db, view, stages, req.variables, req.work) : aggregateView(engine, db, view, stages, req.variables);
}

/**
 * Reads a sibling collection of `db` (for $lookup and friends): its stored documents, or a view's documents; an
 * unknown collection reads as empty.
 */
export const collectionReader =
  (engine: Engine, db: string): CollectionReader =>
  (name) => {
    const coll = engine.collection(db, name);
    if (coll?.isView) return aggregateView(engine, db, coll, []);
    return [...(coll?.docs.values() ?? [])];
  };

export function refuseView(coll: Collection | undefined, what: string): void {
  if (coll?.isView) throw new MongoCommandError(166, `Namespace ${coll.ns} is a view, not a collection${what ? ` (${what})` : ''}`);
}
