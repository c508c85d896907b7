import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, QueryFilter, Types } from 'mongoose';
import { duplicateInsertIndexes, isDuplicateKeyError } from '../database/mongo-errors.js';
import { toObjectId } from '../database/object-id.js';
import { TenantRepository, type CompanyId } from '../database/tenancy/tenant-repository.js';
import type { AnyDomainEvent, DomainEventName } from './domain-events.js';
import { channelOfData } from './event-channel.js';
import { EventLogHead, LoggedEvent } from './event-log.schema.js';

export function toDomainEvent(stored: LoggedEvent, companyId: string): AnyDomainEvent {
  return {
    id: stored._id,
    type: stored.type,
    companyId,
    sequence: stored.sequence,
    occurredAt: stored.occurredAt,
    channel: stored.channel !== undefined ? stored.channel : channelOfData(stored.data),
    data: stored.data,
    ...(stored.trace ? { trace: stored.trace } : {}),
  } as AnyDomainEvent;
}

/** The event log's entries. Appends come only from the relay, which holds the company's head lease. */
@Injectable()
export class EventLogRepository extends TenantRepository<LoggedEvent> {
  constructor(@InjectModel(LoggedEvent.name) model: Model<LoggedEvent>) {
    super(model);
  }

  /**
   * Appends `entries` in order. An event already logged (a republish) is refused by its id and skipped; the
   * others are written all the same. Answers the entries that were new.
   */
  async append(companyId: CompanyId, entries: LoggedEvent[]): Promise<LoggedEvent[]> {
    const company = this.tenant(companyId);
    try {
      await this.model.insertMany(
        entries.map((entry) => ({ ...entry, companyId: company })),
        { ordered: false, lean: true },
      );
      return entries;
    } catch (error) {
      const refused = duplicateInsertIndexes(error, entries.length);
      if (!refused) throw error;
      return entries.filter((_, index) => !refused.has(index));
    }
  }

  /**
   * Up to `limit` events with `after < sequence <= until`, in order, optionally only of `types` and only of
   * conversations on `channels` (an event whose channel is not known is not on any).
   */
  async range(
    companyId: CompanyId,
    range: { after: number; until?: number; types?: readonly DomainEventName[]; channels?: readonly string[] },
    limit: number,
  ): Promise<AnyDomainEvent[]> {
    const sequence: Record<string, number> = { $gt: range.after };
    if (range.until !== undefined) sequence.$lte = range.until;
    const filter: QueryFilter<LoggedEvent> = { sequence };
    if (range.types) filter.type = { $in: [...range.types] };
    if (range.channels) filter.channel = { $in: [...range.channels] };
    const rows = await this.findPlain(companyId, filter, { sort: { sequence: 1 }, limit });
    return rows.map((row) => toDomainEvent(row, String(companyId)));
  }

  /** The sequence of the company's oldest retained event, or null when the log holds none of its events. */
  async oldestSequence(companyId: CompanyId): Promise<number | null> {
    const [oldest] = await this.find(companyId, {}, { sort: { sequence: 1 }, limit: 1, projection: { sequence: 1 } });
    return oldest?.sequence ?? null;
  }

  async byIds(companyId: CompanyId, ids: string[]): Promise<AnyDomainEvent[]> {
    if (ids.length === 0) return [];
    const rows = await this.findPlain(companyId, { _id: { $in: ids } }, { sort: { sequence: 1 }, limit: ids.length });
    return rows.map((row) => toDomainEvent(row, String(companyId)));
  }

  async exists(companyId: CompanyId, id: string): Promise<boolean> {
    return (await this.findOne(companyId, { _id: id }, { _id: 1 })) !== null;
  }
}

/** A company's run of sequence numbers reserved under its head lease. */
export interface Reservation {
  first: number;
  last: number;
}

@Injectable()
export class EventLogHeadsRepository extends TenantRepository<EventLogHead> {
  constructor(@InjectModel(EventLogHead.name) model: Model<EventLogHead>) {
    super(model);
  }

  /**
   * Takes the company's head lease, if free or lapsed, and reserves `count` sequence numbers under it, in one
   * write. A lease held by someone else does not match the filter, so the upsert tries to insert a second head
   * and the unique index refuses it: null, try again shortly.
   */
  async reserve(companyId: CompanyId, count: number, owner: string, leaseMs: number): Promise<Reservation | null> {
    const now = new Date();
    try {
      const head = await this.model
        .findOneAndUpdate(
          this.scope(companyId, { leaseUntil: { $lte: now } }),
          { $set: { leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs) }, $inc: { sequence: count } },
          { upsert: true, returnDocument: 'after', setDefaultsOnInsert: false },
        )
        .lean()
        .exec();
      return head ? { first: head.sequence - count + 1, last: head.sequence } : null;
    } catch (error) {
      if (isDuplicateKeyError(error)) return null;
      throw error;
    }
  }

  /** How far the company's log is complete: every event with a sequence at or below it is in the log. */
  async logged(companyId: CompanyId): Promise<number> {
    return (await this.findOne(companyId, {}, { logged: 1 }))?.logged ?? 0;
  }

  /** `logged` of each of these companies, in one query (0 for a company that never logged an event). */
  async loggedOf(companyIds: string[]): Promise<Map<string, number>> {
    const heads = await this.model
      .find({ companyId: { $in: companyIds.map((id) => toObjectId(id)) } }, { companyId: 1, logged: 1 })
      .lean()
      .exec();
    const logged = new Map(companyIds.map((id) => [id, 0]));
    for (const head of heads as unknown as { companyId: Types.ObjectId; logged: number }[]) logged.set(head.companyId.toHexString(), head.logged);
    return logged;
  }

  /** Gives the lease up, recording that every event up to `logged` is in the log. */
  async release(companyId: CompanyId, owner: string, logged: number): Promise<void> {
    await this.model
      .updateOne(this.scope(companyId, { leaseOwner: owner }), { $set: { leaseOwner: null, leaseUntil: new Date(0) }, $max: { logged } })
      .exec();
  }
}
