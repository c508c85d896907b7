import type { Model, QueryFilter, Types, UpdateQuery } from 'mongoose';
import { TenantRepository, type CompanyId, type Stored } from '../database/tenancy/tenant-repository.js';
import { CROSS_TENANT } from '../database/tenancy/tenant-scope.plugin.js';
import type { EventRelay, EventSourceStore } from './event-relay.js';
import type { EventSource, PendingEvent } from './pending-event.schema.js';

/**
 * The repository of a collection whose writes emit events (conversations, messages, flow executions). A change
 * and its events are one single-document write: the events go into the document's `pendingEvents`, and once the
 * write is acknowledged they are handed to the relay, which moves them into the log and clears them. A crash in
 * between leaves them pending on the document, where the sweep finds them.
 */
export class EventSourceRepository<T extends EventSource> extends TenantRepository<T> implements EventSourceStore {
  constructor(
    model: Model<T>,
    private readonly relay: EventRelay,
  ) {
    super(model);
    relay.registerSource(this);
  }

  get sourceName(): string {
    return this.model.collection.collectionName;
  }

  /**
   * Inserts `data` with `events`. `data` carries its own `_id`, `createdAt` and `updatedAt` when the events'
   * snapshots show them (they are taken before the write), so the stored record and its events agree.
   */
  protected async insertWithEvents(companyId: CompanyId, data: Partial<T>, events: PendingEvent[]): Promise<Stored<T>> {
    const document = { ...data, companyId: this.tenant(companyId), pendingEvents: events };
    const created = await new this.model(document).save({ timestamps: !('updatedAt' in data) });
    const stored = created.toObject() as unknown as Stored<T>;
    this.handOver(companyId, stored._id, events);
    return stored;
  }

  /**
   * Inserts `record` with `events` as it is, without Mongoose's document machinery (casting, defaults,
   * validation), which a hot path pays per write: for records the repository builds complete, with every field
   * set (its own `_id`, `createdAt` and `updatedAt` included) from input the request's DTO has validated.
   * Fields left undefined are not stored, as with a Mongoose save.
   */
  protected async insertCompleteWithEvents(companyId: CompanyId, record: Stored<T>, events: PendingEvent[]): Promise<Stored<T>> {
    const document = { ...record, companyId: this.tenant(companyId), pendingEvents: events };
    await this.model.insertMany([document], { lean: true, ignoreUndefined: true } as never);
    this.handOver(companyId, record._id, events);
    return document;
  }

  /**
   * Applies `update` with `events` to the first match; answers the record after it, or null when none matched
   * (then no event exists). With `timestamps: false` the update sets `updatedAt` itself (a snapshot shows it).
   */
  protected async updateWithEvents(
    companyId: CompanyId,
    filter: QueryFilter<T>,
    update: UpdateQuery<T>,
    events: PendingEvent[],
    options: { timestamps?: boolean } = {},
  ): Promise<Stored<T> | null> {
    const withEvents = { ...update, $push: { ...(update.$push as object), pendingEvents: { $each: events } } } as UpdateQuery<T>;
    const updated = (await this.model
      .findOneAndUpdate(this.scope(companyId, filter), withEvents, { returnDocument: 'after', runValidators: true, timestamps: options.timestamps ?? true })
      .lean()
      .exec()) as Stored<T> | null;
    if (updated) this.handOverPending(companyId, updated);
    return updated;
  }

  /**
   * `updateOne` for a hot write whose filter and update hold only values of their stored types (ObjectIds, dates,
   * numbers), so Mongoose's casting, validators and timestamps add nothing but cost: the update sets `updatedAt`
   * itself. Scoped to the company like every query here.
   */
  protected async updateAsIs(companyId: CompanyId, filter: QueryFilter<T>, update: UpdateQuery<T>): Promise<Stored<T> | null> {
    const updated = (await this.model.collection.findOneAndUpdate(this.scope(companyId, filter) as never, update as never, {
      returnDocument: 'after',
    })) as Stored<T> | null;
    if (updated) this.handOverPending(companyId, updated);
    return updated;
  }

  /** Any write: the record may carry events another process has not logged yet (see handOverPending). */
  override async updateOne(companyId: CompanyId, filter: QueryFilter<T>, update: UpdateQuery<T>): Promise<Stored<T> | null> {
    const updated = await super.updateOne(companyId, filter, update);
    if (updated) this.handOverPending(companyId, updated);
    return updated;
  }

  /**
   * Relays every event the record still carries, in the order they were written: its own, and those of an
   * earlier write (possibly another process's) not logged yet. Whoever follows up on a record relays what came
   * before, so the log never shows a later event of a record before an earlier one (the log keeps the first copy).
   */
  protected handOverPending(companyId: CompanyId, record: Stored<T>): void {
    const pending = record.pendingEvents ?? [];
    if (pending.length > 0) this.handOver(companyId, record._id, pending);
  }

  async clearPending(companyId: string, documents: { docId: Types.ObjectId; ids: string[] }[]): Promise<void> {
    const company = this.tenant(companyId);
    await this.model.bulkWrite(
      documents.map(({ docId, ids }) => ({
        updateOne: {
          filter: { _id: docId, companyId: company },
          update: { $pull: { pendingEvents: { id: { $in: ids } } } },
          timestamps: false,
        },
      })) as never,
      { ordered: false },
    );
  }

  async findStalePending(before: Date, limit: number): Promise<{ companyId: string; docId: Types.ObjectId; events: PendingEvent[] }[]> {
    const rows = (await this.model
      .find({ 'pendingEvents.occurredAt': { $lte: before } } as QueryFilter<T>, { companyId: 1, pendingEvents: 1 })
      .sort({ 'pendingEvents.occurredAt': 1 })
      .limit(limit)
      .setOptions({ [CROSS_TENANT]: true })
      .lean()
      .exec()) as unknown as Stored<T>[];
    return rows.map((row) => ({ companyId: row.companyId.toHexString(), docId: row._id, events: row.pendingEvents ?? [] }));
  }

  private handOver(companyId: CompanyId, docId: Types.ObjectId, events: PendingEvent[]): void {
    this.relay.enqueue(String(companyId), { source: this, docId, events });
  }
}
