import { Injectable } from '@nestjs/common';
import { InjectModel } from '@nestjs/mongoose';
import { Types, type Model, type QueryFilter } from 'mongoose';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { EventRelay } from '../events/event-relay.js';
import { EventSourceRepository } from '../events/event-source.repository.js';
import type { PendingEvent } from '../events/pending-event.schema.js';
import { MessageTemplate } from './message-template.schema.js';
import type { StagedAuditEntry } from '../audit/audit-entry.js';
import { withAudit } from '../audit/audited.js';

/** A template about to be inserted, without the fields the repository sets. */
export type NewMessageTemplate = Omit<MessageTemplate, 'pendingEvents'>;

@Injectable()
export class MessageTemplatesRepository extends EventSourceRepository<MessageTemplate> {
  constructor(@InjectModel(MessageTemplate.name) model: Model<MessageTemplate>, relay: EventRelay) {
    super(model, relay);
  }

  /** Inserts the template with the events `stage` makes of it, complete before the write so the events show it as stored. */
  async insert(companyId: CompanyId, data: NewMessageTemplate, stage: (stored: Stored<MessageTemplate>) => PendingEvent[]): Promise<Stored<MessageTemplate>> {
    const now = new Date();
    const record = { _id: new Types.ObjectId(), ...data, companyId: new Types.ObjectId(String(companyId)), createdAt: now, updatedAt: now } as Stored<MessageTemplate>;
    return this.insertWithEvents(companyId, record, stage(record));
  }

  /**
   * Sets `set` on `current` if its status is still the one `current` shows, with the events `stage` makes of the
   * result; null when it moved meanwhile (nothing written, no event).
   */
  async changeStatus(
    companyId: CompanyId,
    current: Stored<MessageTemplate>,
    set: Pick<MessageTemplate, 'status' | 'rejectionReason'>,
    stage: (after: Stored<MessageTemplate>) => PendingEvent[],
    audit?: StagedAuditEntry,
  ): Promise<Stored<MessageTemplate> | null> {
    const updatedAt = new Date();
    const after = { ...current, ...set, updatedAt, pendingEvents: undefined } as Stored<MessageTemplate>;
    const filter = { _id: current._id, status: current.status } as QueryFilter<MessageTemplate>;
    const update = { $set: { ...set, updatedAt } };
    return this.updateWithEvents(companyId, filter, audit ? withAudit(update, audit) : update, stage(after), { timestamps: false });
  }

  /** The template a send names; served by the unique index. */
  async findByName(companyId: CompanyId, channel: string, name: string, language: string): Promise<Stored<MessageTemplate> | null> {
    return this.findOne(companyId, { channel, name, language });
  }
}
