/**
 * All in-memory state of one server: databases (independent namespaces of collections), open cursors, and the
 * TTL pass that deletes expired documents. Every change of that state goes through the write methods of `Engine`,
 * `Database` and `Collection`, which hand it to the change log first (the journal, when there is a data directory).
 */
import type { Document } from 'bson';
import { MongoCommandError } from '../errors.js';
import { DEFAULT_WORK_LIMITS, type WorkLimits } from '../query/work.js';
import type { Change, ChangeLog, ChangeRecorder } from './changes.js';
import { Collection } from './collection.js';
import { CursorStore } from './cursors.js';

export class Database {
  private readonly map = new Map<string, Collection>();

  constructor(
    readonly engine: Engine,
    readonly name: string,
  ) {}

  get collections(): ReadonlyMap<string, Collection> {
    return this.map;
  }

  /** The collection, created implicitly (as MongoDB does on first write or index creation). */
  ensure(name: string): Collection {
    return this.map.get(name) ?? this.create(name, {});
  }

  /** Creates a collection with its options (plain data, journaled as they are). */
  create(name: string, options: Document): Collection {
    validateCollectionName(name);
    this.engine.record({ op: 'createCollection', db: this.name, coll: name, options });
    const coll = new Collection(this.name, name, options, this.engine);
    this.map.set(name, coll);
    return coll;
  }

  /** Drops a collection; false when there is none by that name. */
  drop(name: string): boolean {
    if (!this.map.has(name)) return false;
    this.engine.record({ op: 'dropCollection', db: this.name, coll: name });
    this.map.delete(name);
    return true;
  }
}

/**
 * Time series and clustered collections with `expireAfterSeconds` expire on their time field or their `_id` (a Date),
 * scanning the collection (they have no index on it here).
 */
function expireCollection(coll: Collection, now: number): number {
  const seconds = coll.options.expireAfterSeconds;
  if (typeof seconds !== 'number') return 0;
  const field = coll.options.timeseries ? ((coll.options.timeseries as Document).timeField as string) : '_id';
  const cutoff = now - seconds * 1000;
  const expired = [...coll.docs.values()].filter((doc) => doc[field] instanceof Date && (doc[field] as Date).getTime() < cutoff);
  for (const doc of expired) coll.delete(doc);
  return expired.length;
}

export function validateCollectionName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || name.length === 0 || name.includes('\0') || name.startsWith('.') || name.includes('$'))
    throw new MongoCommandError(73, `Invalid collection name: ${String(name)}`);
}

export class Engine implements ChangeRecorder {
  private readonly map = new Map<string, Database>();
  readonly cursors = new CursorStore();
  /** Set once recovery is done on a data directory; null while in memory or replaying. */
  changeLog: ChangeLog | null = null;
  /** How long one command may keep the others waiting (query/work.ts). */
  workLimits: WorkLimits = DEFAULT_WORK_LIMITS;

  get databases(): ReadonlyMap<string, Database> {
    return this.map;
  }

  db(name: string): Database {
    let db = this.map.get(name);
    if (!db) {
      if (!name || /[/\\. "$\0]/.test(name)) throw new MongoCommandError(73, `Invalid database name: '${name}'`);
      db = new Database(this, name);
      this.map.set(name, db);
    }
    return db;
  }

  collection(db: string, name: string): Collection | undefined {
    return this.map.get(db)?.collections.get(name);
  }

  dropDatabase(name: string): void {
    if (!this.map.has(name)) return;
    this.record({ op: 'dropDatabase', db: name });
    this.map.delete(name);
  }

  /** Hands a change to the change log before it is applied. */
  record(change: Change): void {
    this.changeLog?.record(change);
  }

  /** Deletes documents whose TTL-indexed date is older than `expireAfterSeconds`; returns how many. */
  expireTtl(now: number): number {
    let removed = 0;
    for (const db of this.map.values()) {
      for (const coll of db.collections.values()) {
        removed += expireCollection(coll, now);
        for (const index of coll.indexes.values()) {
          if (index.kind !== 'btree' || index.expireAfterSeconds === undefined || index.fields.length !== 1) continue;
          const cutoff = new Date(now - index.expireAfterSeconds * 1000);
          // Only Date keys expire; they form one contiguous range of the index, bounded above by the cutoff.
          const [from, to] = index.bounds([], { value: new Date(-8.64e15), inclusive: true }, { value: cutoff, inclusive: true });
          const expired: Document[] = [];
          for (const entry of index.entries.range(from, to, false)) {
            const doc = coll.docs.get(entry.ik);
            if (doc) expired.push(doc);
          }
          for (const doc of expired) coll.delete(doc);
          removed += expired.length;
        }
      }
    }
    return removed;
  }
}
