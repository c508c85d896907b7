import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectConnection, InjectModel } from '@nestjs/mongoose';
import { setTimeout as sleep } from 'node:timers/promises';
import { Types, type Connection, type Model } from 'mongoose';
import { AppConfig } from '../config/app-config.js';
import { duplicateInsertIndexes, isDuplicateKeyError } from '../database/mongo-errors.js';
import { toObjectId } from '../database/object-id.js';
import { isRemovable } from '../database/tenancy/removable.plugin.js';
import { ScheduledJobs } from '../lanes/scheduled-jobs.js';
import type { StagedAuditEntry } from './audit-entry.js';
import { chainHash } from './audit-chain.js';
import { AuditLogEntry } from './audit-log.schema.js';

/** An entry still pending this long after its change is taken for left behind: the trail chains within milliseconds. */
const PENDING_GRACE_MS = 15_000;
const SWEEP_EVERY_MS = 5_000;
const SWEEP_BATCH = 500;
/** Appenders of one company in other processes took the next number: read the head again and retry. */
const APPEND_ATTEMPTS = 50;
/** A document whose every audit entry, and every event it may carry (see EventSource), is in its log. */
const NOTHING_PENDING = { 'pendingAudit.0': { $exists: false }, 'pendingEvents.0': { $exists: false } };

/**
 * Chains audit entries into the audit log. A change is written with its entry (the document's `pendingAudit`,
 * see auditedPlugin); once the write is acknowledged the entry is handed here without waiting, appended after the
 * company's last entry (its sequence + 1, its hash over the previous hash), and cleared from the document. A
 * process that dies in between leaves the entry pending, where the sweep finds it; the log refuses an entry it
 * holds already (by id), and the unique (companyId, sequence) index makes concurrent appenders take turns.
 */
@Injectable()
export class AuditTrail implements OnModuleInit {
  private readonly logger = new Logger(AuditTrail.name);
  /** Per company, the appends of this process one after another (they would only race each other for numbers). */
  private readonly tails = new Map<string, Promise<void>>();
  private readonly retentionMs: number;

  constructor(
    config: AppConfig,
    @InjectModel(AuditLogEntry.name) private readonly log: Model<AuditLogEntry>,
    @InjectConnection() private readonly connection: Connection,
    private readonly jobs: ScheduledJobs,
  ) {
    this.retentionMs = config.auditRetentionDays * 86_400_000;
  }

  onModuleInit(): void {
    this.jobs.schedule('audit-sweep', SWEEP_EVERY_MS, async () => {
      await this.sweep(new Date());
    });
  }

  /**
   * After a write that carried `entries` in its document's `pendingAudit` (of `collection`): chains them in the
   * background. A failure leaves them pending, for the sweep.
   */
  written(companyId: string | Types.ObjectId, collection: string, docId: Types.ObjectId, entries: StagedAuditEntry[]): void {
    this.chained(String(companyId), collection, docId, entries).catch((error: unknown) =>
      this.logger.warn({ err: error }, `Audit entries of company ${String(companyId)} left for the sweep`),
    );
  }

  /**
   * Chains every entry pending since PENDING_GRACE_MS before `now`, and finishes the removals marked as long ago
   * whose entries are all in the log (a process died between its pull and its delete); answers how many entries.
   */
  async sweep(now: Date): Promise<number> {
    const before = new Date(now.getTime() - PENDING_GRACE_MS);
    let count = 0;
    for (const { collection, removable } of this.auditedCollections()) {
      const rows = await this.connection
        .collection(collection)
        .find(
          { 'pendingAudit.at': { $lte: before } },
          { projection: { companyId: 1, pendingAudit: 1 }, sort: { 'pendingAudit.at': 1 }, limit: SWEEP_BATCH },
        )
        .toArray();
      for (const row of rows) {
        const entries = (row.pendingAudit ?? []) as StagedAuditEntry[];
        await this.chained(String(row.companyId), collection, row._id as Types.ObjectId, entries);
        count += entries.length;
      }
      if (removable) await this.connection.collection(collection).deleteMany({ removedAt: { $lte: before }, ...NOTHING_PENDING });
    }
    return count;
  }

  private auditedCollections(): { collection: string; removable: boolean }[] {
    return this.connection.modelNames().flatMap((name) => {
      const model = this.connection.model(name);
      return model.schema.path('pendingAudit') ? [{ collection: model.collection.collectionName, removable: isRemovable(model.schema) }] : [];
    });
  }

  /**
   * Appends the entries, pulls them from their document, and deletes the document if it is marked removed and
   * carries nothing else pending (TenantRepository.removeAudited): its removal is done once its entry is in the log.
   */
  private async chained(companyId: string, collection: string, docId: Types.ObjectId, entries: StagedAuditEntry[]): Promise<void> {
    await this.append(companyId, entries);
    const documents = this.connection.collection(collection);
    const mine = { _id: docId, companyId: toObjectId(companyId) };
    const after = await documents.findOneAndUpdate(mine, { $pull: { pendingAudit: { id: { $in: entries.map((entry) => entry.id) } } } } as never, {
      returnDocument: 'after',
      projection: { removedAt: 1, pendingAudit: 1, pendingEvents: 1 },
    });
    // One still carrying events is left to the sweep, once the relay has logged them.
    if (after?.removedAt && !(after.pendingAudit as unknown[] | undefined)?.length && !(after.pendingEvents as unknown[] | undefined)?.length) {
      await documents.deleteOne({ ...mine, removedAt: { $exists: true }, ...NOTHING_PENDING });
    }
  }

  private append(companyId: string, entries: StagedAuditEntry[]): Promise<void> {
    const previous = this.tails.get(companyId) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.appendNow(companyId, entries));
    const tail = next.catch(() => undefined);
    this.tails.set(companyId, tail);
    void tail.then(() => {
      if (this.tails.get(companyId) === tail) this.tails.delete(companyId);
    });
    return next;
  }

  private async appendNow(companyId: string, staged: StagedAuditEntry[]): Promise<void> {
    const company = toObjectId(companyId);
    for (let attempt = 1; ; attempt += 1) {
      const logged = new Set(
        (
          await this.log
            .find({ companyId: company, _id: { $in: staged.map((entry) => entry.id) } }, { _id: 1 })
            .lean()
            .exec()
        ).map((row) => row._id),
      );
      const fresh = staged.filter((entry) => !logged.has(entry.id));
      if (fresh.length === 0) return;
      const [last] = await this.log.find({ companyId: company }, { sequence: 1, hash: 1 }).sort({ sequence: -1 }).limit(1).lean().exec();
      const names = await this.actorNames(fresh);
      let sequence = last?.sequence ?? 0;
      let previousHash = last?.hash ?? '';
      const rows = fresh.map((entry) => {
        sequence += 1;
        const content = {
          _id: entry.id,
          sequence,
          at: new Date(entry.at),
          actor: { type: entry.actor.type, id: entry.actor.id, name: names.get(`${entry.actor.type}:${entry.actor.id}`) ?? null },
          action: entry.action,
          target: entry.target,
          changes: entry.changes ?? null,
          requestId: entry.requestId ?? null,
          ip: entry.ip ?? null,
        };
        const hash = chainHash(previousHash, content);
        const row = { ...content, companyId: company, previousHash, hash, expireAt: new Date(content.at.getTime() + this.retentionMs) };
        previousHash = hash;
        return row;
      });
      try {
        // In order: a refused number stops the rest, so what went in continues the chain without a gap.
        await this.log.insertMany(rows, { ordered: true, lean: true });
        return;
      } catch (error) {
        const taken = isDuplicateKeyError(error) || duplicateInsertIndexes(error, rows.length) !== null;
        if (!taken || attempt >= APPEND_ATTEMPTS) throw error;
        await sleep(2 + Math.random() * 10);
      }
    }
  }

  /** The names of the agents and API keys acting in `entries`, as they are now (an entry keeps the name it got). */
  private async actorNames(entries: StagedAuditEntry[]): Promise<Map<string, string>> {
    const names = new Map<string, string>([['system:null', 'Parley']]);
    const idsOf = (type: string) => [
      ...new Set(entries.filter((entry) => entry.actor.type === type && entry.actor.id).map((entry) => entry.actor.id!)),
    ];
    const lookups: [string, string][] = [
      ['agent', 'agents'],
      ['api_key', 'api_keys'],
    ];
    for (const [type, collection] of lookups) {
      const ids = idsOf(type).filter((id) => Types.ObjectId.isValid(id));
      if (ids.length === 0) continue;
      const rows = await this.connection
        .collection(collection)
        .find({ _id: { $in: ids.map((id) => new Types.ObjectId(id)) } }, { projection: { name: 1 } })
        .toArray();
      for (const row of rows) names.set(`${type}:${String(row._id)}`, String(row.name));
    }
    return names;
  }
}
