import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import type { Model, Types } from 'mongoose';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import type { PendingEvent } from '../events/pending-event.schema.js';
import { ContactMerge, type MergePlan, type MergeStatus } from './contact-merge.schema.js';
import type { StagedAuditEntry } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';

@Injectable()
export class ContactMergesRepository extends EventSourceRepository<ContactMerge> {
  constructor(@InjectModel(ContactMerge.name) model: Model<ContactMerge>, relay: EventRelay) {
    super(model, relay);
  }

  async insert(
    companyId: CompanyId,
    merge: Pick<ContactMerge, 'targetId' | 'sourceIds' | 'agentId'> & { _id: Types.ObjectId },
    audit: StagedAuditEntry,
  ): Promise<Stored<ContactMerge>> {
    return this.create(companyId, {
      ...merge,
      status: 'running',
      plan: null,
      mergedAt: null,
      undoneAt: null,
      pendingAudit: [audit],
    } as Partial<ContactMerge>);
  }

  /** Records the plan once; a resumed merge finds the first one and keeps it. */
  async recordPlan(companyId: CompanyId, id: Types.ObjectId, plan: MergePlan): Promise<Stored<ContactMerge> | null> {
    return this.updateOne(companyId, { _id: id, plan: null }, { $set: { plan } });
  }

  /** Moves from status `from` to `to`, with `events` and `set`, only if still in `from`; null when it was not. */
  async transition(
    companyId: CompanyId,
    id: Types.ObjectId,
    from: MergeStatus,
    to: MergeStatus,
    set: Partial<ContactMerge> = {},
    events: PendingEvent[] = [],
    audit?: StagedAuditEntry,
  ): Promise<Stored<ContactMerge> | null> {
    const update = { $set: { ...set, status: to } };
    return this.updateWithEvents(companyId, { _id: id, status: from }, audit ? withAudit(update, audit) : update, events);
  }
}
