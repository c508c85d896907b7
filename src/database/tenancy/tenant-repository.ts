import type { Document, Filter } from 'mongodb';
import type { Model, PipelineStage, ProjectionType, QueryFilter, SortOrder, Types, UpdateQuery } from 'mongoose';
import { decodeCursor, encodeCursor } from '../../common/pagination/cursor.js';
import type { Page } from '../../common/pagination/page.js';
import { isDuplicateKeyError } from '../mongo-errors.js';
import { parseObjectId, toObjectId } from '../object-id.js';
import type { StagedAuditEntry } from '../../audit/audit-entry.js';
import { freedFieldOf, isRemovable } from './removable.plugin.js';
import { MissingTenantFilterError } from './tenant-scope.plugin.js';

/** The tenant: always the company id of the authenticated principal, never a value from the request body. */
export type CompanyId = string | Types.ObjectId;

/** A stored record as read with `lean()`. */
export type Stored<T> = T & { _id: Types.ObjectId; companyId: Types.ObjectId; createdAt: Date; updatedAt: Date };

export interface FindOptions<T> {
  sort?: Record<string, SortOrder>;
  limit?: number;
  skip?: number;
  projection?: ProjectionType<T>;
}

/**
 * The one place where a company's data is read and written. Every method takes the company id
 * first and adds it to the filter (after the caller's filter, so it cannot be overridden); the
 * tenant-scope plugin refuses any query that bypasses this class without it. Reads are `lean()`.
 * Records marked removed (removablePlugin) are out of reach of every method.
 */
export class TenantRepository<T> {
  /** Records marked removed (removablePlugin) are left out of every read and write made here. */
  private readonly removable: boolean;

  constructor(protected readonly model: Model<T>) {
    this.removable = isRemovable(model.schema);
  }

  /** Where the records are stored (what an audit entry written with a change names, see AuditTrail). */
  get collectionName(): string {
    return this.model.collection.collectionName;
  }

  /**
   * The company's id as stored. Refuses a missing company as the tenant-scope plugin refuses a Mongoose query
   * without one, so that reads and writes through the driver alone (`findPlain`, `updateAsIs`, complete inserts)
   * are held alike.
   */
  protected tenant(companyId: CompanyId): Types.ObjectId {
    if (companyId === undefined || companyId === null) throw new MissingTenantFilterError(this.model.modelName, 'query');
    return toObjectId(companyId);
  }

  /** The filter within the company (see `tenant`), among the records not marked removed. */
  protected scope(companyId: CompanyId, filter: QueryFilter<T> = {}): QueryFilter<T> {
    const scoped = { ...filter, companyId: this.tenant(companyId) };
    return (this.removable ? { ...scoped, removedAt: { $exists: false } } : scoped) as QueryFilter<T>;
  }

  /** A malformed id finds nothing, like a missing one. */
  async findById(companyId: CompanyId, id: string, projection?: ProjectionType<T>): Promise<Stored<T> | null> {
    const _id = parseObjectId(id);
    if (!_id) return null;
    return this.findOne(companyId, { _id } as QueryFilter<T>, projection);
  }

  async findOne(companyId: CompanyId, filter: QueryFilter<T>, projection?: ProjectionType<T>): Promise<Stored<T> | null> {
    return (await this.model.findOne(this.scope(companyId, filter), projection).lean().exec()) as Stored<T> | null;
  }

  async find(companyId: CompanyId, filter: QueryFilter<T> = {}, options: FindOptions<T> = {}): Promise<Stored<T>[]> {
    const query = this.model.find(this.scope(companyId, filter), options.projection);
    if (options.sort) query.sort(options.sort);
    if (options.skip) query.skip(options.skip);
    if (options.limit) query.limit(options.limit);
    return (await query.lean().exec()) as Stored<T>[];
  }

  /**
   * `find` through the driver alone, for the hot reads where Mongoose only adds cost (a query object, casting
   * the filter, middleware, per document and per request): the filter must already hold the stored types
   * (ObjectIds, Dates), since nothing casts it. Scoped like every method here (see `scope`).
   *
   * With a `limit`, the read is one `find` command whose first batch holds the whole answer, decoded in one
   * pass: the driver's cursor would parse every document twice (an element index, then the object) and
   * build a cursor for one batch. Should the server still hold more (a first batch stops at 16 MiB), its
   * cursor is closed and the read is done again through a cursor.
   */
  async findPlain(companyId: CompanyId, filter: QueryFilter<T>, options: FindOptions<T> = {}): Promise<Stored<T>[]> {
    const { projection, sort, limit, skip } = options;
    const scoped = this.scope(companyId, filter) as Filter<unknown>;
    const db = this.model.db.db;
    const collection = this.model.collection.collectionName;
    if (limit !== undefined && limit > 0 && db !== undefined) {
      const command: Document = { find: collection, filter: scoped, limit, batchSize: limit };
      if (projection) command.projection = projection;
      if (sort) command.sort = sort;
      if (skip) command.skip = skip;
      const { cursor } = (await db.command(command)) as { cursor: { id: unknown; firstBatch: Stored<T>[] } };
      if (Number(cursor.id) === 0) return cursor.firstBatch;
      await db.command({ killCursors: collection, cursors: [cursor.id] });
    }
    const cursor = this.model.collection.find(scoped, { projection: projection as object | undefined, sort, limit, skip });
    return (await cursor.toArray()) as unknown as Stored<T>[];
  }

  /** `findOne` as a `findPlain` read (one command, nothing cast: the filter holds stored types). */
  async findOnePlain(companyId: CompanyId, filter: QueryFilter<T>, projection?: ProjectionType<T>): Promise<Stored<T> | null> {
    const [found] = await this.findPlain(companyId, filter, { projection, limit: 1 });
    return found ?? null;
  }

  /**
   * Newest first by `_id`, continuing strictly below the cursor's `_id` (a forged cursor is a 400): records inserted meanwhile get larger
   * ids and land on the first page, so walking the pages never repeats or skips one. `plain`: read with
   * `findPlain` (the filter then holds stored types).
   */
  async page(
    companyId: CompanyId,
    filter: QueryFilter<T>,
    options: { limit: number; cursor?: string; projection?: ProjectionType<T>; plain?: boolean },
  ): Promise<Page<Stored<T>>> {
    const window = options.cursor ? { ...filter, _id: { $lt: decodeCursor(options.cursor) } } : filter;
    const read = options.plain ? this.findPlain : this.find;
    const rows = await read.call(this, companyId, window as QueryFilter<T>, {
      sort: { _id: -1 },
      limit: options.limit + 1,
      projection: options.projection,
    });
    const data = rows.slice(0, options.limit);
    const more = rows.length > options.limit;
    return { data, nextCursor: more ? encodeCursor(data[data.length - 1]._id) : null };
  }

  /**
   * How many records match `filter` (stored types, nothing cast), by the `count` command: where an index range holds
   * exactly the matches, MongoDB counts its keys without reading a record (COUNT_SCAN), as the embedded engine does.
   * (Mongoose's countDocuments runs an aggregation, which reads every match.)
   */
  async countPlain(companyId: CompanyId, filter: QueryFilter<T>, limit?: number): Promise<number> {
    const db = this.model.db.db;
    if (!db) throw new Error('The database connection is not open');
    const command: Document = { count: this.model.collection.collectionName, query: this.scope(companyId, filter) };
    // With a limit, counting stops there: a count that only needs to know "more than N" never reads past N.
    if (limit !== undefined) command.limit = limit;
    const { n } = (await db.command(command)) as { n: number };
    return n;
  }

  async count(companyId: CompanyId, filter: QueryFilter<T> = {}): Promise<number> {
    return this.model.countDocuments(this.scope(companyId, filter)).exec();
  }

  async create(companyId: CompanyId, data: Partial<T>): Promise<Stored<T>> {
    const created = await this.model.create({ ...data, companyId: this.tenant(companyId) });
    return created.toObject() as unknown as Stored<T>;
  }

  /** Applies `update` to the first match and returns the updated record, or null when none matched. */
  async updateOne(companyId: CompanyId, filter: QueryFilter<T>, update: UpdateQuery<T>): Promise<Stored<T> | null> {
    return (await this.model
      .findOneAndUpdate(this.scope(companyId, filter), update, { returnDocument: 'after', runValidators: true })
      .lean()
      .exec()) as Stored<T> | null;
  }

  /**
   * Takes the record `filter` matches (free, lapsed: whatever makes it takeable) with `update`, or inserts
   * one when there is none. A record that exists but does not match makes the upsert insert a second one,
   * which a unique index refuses: false, someone else holds it.
   */
  async claimOne(companyId: CompanyId, filter: QueryFilter<T>, update: UpdateQuery<T>): Promise<boolean> {
    try {
      await this.model.updateOne(this.scope(companyId, filter), update, { upsert: true }).exec();
      return true;
    } catch (error) {
      if (isDuplicateKeyError(error)) return false;
      throw error;
    }
  }

  async updateMany(companyId: CompanyId, filter: QueryFilter<T>, update: UpdateQuery<T>): Promise<number> {
    const result = await this.model.updateMany(this.scope(companyId, filter), update, { runValidators: true }).exec();
    return result.modifiedCount;
  }

  async deleteOne(companyId: CompanyId, filter: QueryFilter<T>): Promise<boolean> {
    const result = await this.model.deleteOne(this.scope(companyId, filter)).exec();
    return result.deletedCount === 1;
  }

  /**
   * Removes the record `filter` matches with its audit entry in ONE write (removablePlugin): marks it `removedAt`,
   * writes `entry` into its `pendingAudit`, and frees its unique key, so that from then on it is gone for every
   * method here and a record of the same key can be created. AuditTrail deletes it once the entry is in the log.
   * Answers the record as it was, or null when none matched.
   */
  async removeAudited(companyId: CompanyId, filter: QueryFilter<T> & { _id: Types.ObjectId }, entry: StagedAuditEntry): Promise<Stored<T> | null> {
    if (!this.removable) throw new Error(`${this.model.modelName} records are not removable with an audit entry (removablePlugin)`);
    const freed = freedFieldOf(this.model.schema);
    const set: Record<string, unknown> = { removedAt: entry.at };
    if (freed) set[freed] = `removed:${filter._id.toHexString()}`;
    // No validator runs on the mark: the freed value need not be a valid key (a shortCode's pattern refuses ':').
    return (await this.model
      .findOneAndUpdate(this.scope(companyId, filter), { $set: set, $push: { pendingAudit: entry } } as UpdateQuery<T>, {
        returnDocument: 'before',
        runValidators: false,
      })
      .lean()
      .exec()) as Stored<T> | null;
  }

  async deleteMany(companyId: CompanyId, filter: QueryFilter<T>): Promise<number> {
    const result = await this.model.deleteMany(this.scope(companyId, filter)).exec();
    return result.deletedCount;
  }

  /** Runs `pipeline` behind a leading `$match` on the company, so it starts on the companyId index. */
  async aggregate<R>(companyId: CompanyId, pipeline: PipelineStage[]): Promise<R[]> {
    const [first, ...rest] = pipeline;
    const head: PipelineStage[] =
      first && '$match' in first
        ? [{ $match: this.scope(companyId, first.$match as QueryFilter<T>) }, ...rest]
        : [{ $match: this.scope(companyId) }, ...pipeline];
    return this.model.aggregate<R>(head).exec();
  }
}
