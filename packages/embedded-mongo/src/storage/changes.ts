/**
 * The logical changes the storage write methods make, as the journal records them and recovery replays them. Each
 * one sets a state (a document's whole new version, an index with its whole spec, a collection's whole options)
 * rather than describing a delta, so replaying a change reproduces exactly what the write produced.
 */
import type { Document } from 'bson';
import type { Engine } from './engine.js';

export type Change =
  | { op: 'createCollection'; db: string; coll: string; options: Document }
  | { op: 'setOptions'; db: string; coll: string; options: Document }
  | { op: 'dropCollection'; db: string; coll: string }
  | { op: 'dropDatabase'; db: string }
  | { op: 'createIndex'; db: string; coll: string; spec: Document }
  /** An index built from its spec in place of the one of its name, or added, without checking its documents. */
  | { op: 'putIndex'; db: string; coll: string; spec: Document }
  | { op: 'dropIndex'; db: string; coll: string; name: string }
  /**
   * Insert or replace, by `_id`; in a collection keyed by insertion (time series), where several documents may share
   * an `_id`, a replacement names the version it replaces (`old`).
   */
  | { op: 'put'; db: string; coll: string; doc: Document; old?: Document }
  /** By `_id`; in a collection keyed by insertion, by the whole document (`doc`). */
  | { op: 'delete'; db: string; coll: string; id: unknown; doc?: Document };

/** What the storage write methods hand their changes to: the engine. */
export interface ChangeRecorder {
  /** Called before the change is applied; throwing refuses the write. */
  record(change: Change): void;
}

/** For a scratch collection outside the engine's state (a dry run), whose changes go nowhere. */
export const UNRECORDED: ChangeRecorder = { record: () => {} };

/** Where an engine's changes go (the journal of its data directory); an in-memory engine has none. */
export interface ChangeLog extends ChangeRecorder {
  /** Sequence number of the last change recorded. */
  readonly lsn: number;
  /** Null when change `lsn` is durable already, else a promise resolved once it is (rejected if it cannot be). */
  whenDurable(lsn: number): Promise<void> | null;
}

/** Applies a recorded change to an engine that records nothing (recovery). */
export function applyChange(engine: Engine, change: Change): void {
  if (change.op === 'dropDatabase') {
    engine.dropDatabase(change.db);
    return;
  }
  const db = engine.db(change.db);
  switch (change.op) {
    case 'createCollection':
      if (db.collections.has(change.coll)) db.collections.get(change.coll)!.setOptions(change.options);
      else db.create(change.coll, change.options);
      return;
    case 'dropCollection':
      db.drop(change.coll);
      return;
  }
  const coll = db.ensure(change.coll);
  switch (change.op) {
    case 'setOptions':
      coll.setOptions(change.options);
      return;
    case 'createIndex':
      coll.createIndex(change.spec);
      return;
    case 'putIndex':
      coll.putIndex(change.spec);
      return;
    case 'dropIndex':
      if (coll.indexes.has(change.name)) coll.dropIndex(change.name);
      return;
    case 'put': {
      const current = change.old ? coll.findEqual(change.old) : coll.get(change.doc._id);
      if (current) coll.replace(current, change.doc);
      else coll.insert(change.doc);
      return;
    }
    case 'delete': {
      const current = change.doc ? coll.findEqual(change.doc) : coll.get(change.id);
      if (current) coll.delete(current);
    }
  }
}
