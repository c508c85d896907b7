import { ConflictException, Injectable, NotFoundException } from '@nestjs/common';
import { Types } from 'mongoose';
import { RequestValidationException } from '../common/errors/request-validation.exception.js';
import { DAY_MS } from '../common/calendar-dates.js';
import { AppConfig } from '../config/app-config.js';
import type { Contact } from '../contacts/contact.schema.js';
import { ContactView } from '../contacts/contact.view.js';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { ContactsService } from '../contacts/contacts.service.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { Clock } from '../lanes/clock.js';
import { ContactMergeRunner, IDENTITY_FIELDS } from './contact-merge-runner.js';
import { ContactMergeUndoneView, ContactMergeView } from './contact-merge.view.js';
import { ContactMergesRepository } from './contact-merges.repository.js';
import type { MergeContactsDto } from './dto/merge-contacts.dto.js';
import { stageAudit, type AuditOrigin } from '../audit/audit-entry.js';
import { AuditTrail } from '../audit/audit-trail.js';

/**
 * Contact merges (contract section 22): checks a request, writes the merge's durable record and runs it
 * (ContactMergeRunner), which a crash only delays. One merge is one operation for its caller: it answers once done.
 */
@Injectable()
export class ContactMergesService {
  private readonly undoWindowMs: number;

  constructor(
    config: AppConfig,
    private readonly merges: ContactMergesRepository,
    private readonly contacts: ContactsService,
    private readonly contactRecords: ContactsRepository,
    private readonly runner: ContactMergeRunner,
    private readonly clock: Clock,
    private readonly audit: AuditTrail,
  ) {
    this.undoWindowMs = config.contactMergeUndoDays * DAY_MS;
  }

  /**
   * 400 (nothing changed) when a source is the target; 404 for a contact not of the company; 410 for a merged one;
   * 409 while another merge or undo holds one of them.
   */
  async merge(companyId: CompanyId, agentId: string, dto: MergeContactsDto, origin: AuditOrigin): Promise<ContactMergeView> {
    if (dto.sourceIds.includes(dto.targetId)) {
      throw new RequestValidationException([
        { field: 'sourceIds', message: 'sourceIds must not include targetId: a contact is not merged into itself' },
      ]);
    }
    const [target, ...sources] = await this.existingAll(companyId, [dto.targetId, ...dto.sourceIds]);
    const busy = [target, ...sources].find((contact) => contact.mergeLock);
    if (busy) throw this.busy(busy._id.toHexString());
    const _id = new Types.ObjectId();
    // Contacts are personal data: the entry names the merge and its contacts by id, never their values.
    const entry = stageAudit(
      origin,
      'contact.merged',
      { type: 'contact', id: target._id.toHexString() },
      {
        mergeId: [null, _id.toHexString()],
        sourceIds: [null, sources.map((source) => source._id.toHexString())],
      },
    );
    const record = await this.merges.insert(
      companyId,
      { _id, targetId: target._id, sourceIds: sources.map((source) => source._id), agentId: new Types.ObjectId(agentId) },
      entry,
    );
    this.audit.written(companyId, this.merges.collectionName, _id, [entry]);
    await this.runner.arm(companyId, record._id);
    await this.runner.finish(companyId, record);
    const merged = await this.contacts.existing(companyId, dto.targetId);
    return { mergeId: record._id.toHexString(), contact: ContactView.from(merged) };
  }

  /**
   * Undoes a merge within CONTACT_MERGE_UNDO_DAYS: 404 for a merge not of the company; 409 after the window, when it
   * was undone already or is under way, when its target was merged away since, or when a source's e-mail or phone
   * belongs to another contact now.
   */
  async undo(companyId: CompanyId, id: string, origin: AuditOrigin): Promise<ContactMergeUndoneView> {
    const merge = await this.merges.findById(companyId, id);
    if (!merge) throw new NotFoundException(`Contact merge ${id} not found`);
    if (merge.status === 'undone') throw new ConflictException(`Contact merge ${id} was undone already, at ${merge.undoneAt?.toISOString()}`);
    if (merge.status !== 'done') throw new ConflictException(`Contact merge ${id} is under way; try again when it is done`);
    const until = new Date(merge.mergedAt!.getTime() + this.undoWindowMs);
    if (this.clock.now() > until) {
      throw new ConflictException(`Contact merge ${id} can no longer be undone: it could until ${until.toISOString()} (CONTACT_MERGE_UNDO_DAYS)`);
    }
    if (!merge.plan) throw new ConflictException(`Contact merge ${id} can no longer be undone: a contact of it was erased`);
    const plan = merge.plan;
    const target = await this.contactRecords.findById(companyId, plan.target.id.toHexString());
    if (!target || target.mergedInto) {
      throw new ConflictException(
        `Contact merge ${id} cannot be undone: its target ${plan.target.id.toHexString()} was ${target ? 'merged into another contact' : 'deleted'} since`,
      );
    }
    for (const source of plan.sources) {
      for (const field of IDENTITY_FIELDS) {
        const value = source[field];
        const holder = value ? await this.contactRecords.findByIdentity(companyId, field, value) : null;
        const filledByMerge = holder?._id.equals(target._id) && plan.filled[field] === value;
        if (holder && !filledByMerge) {
          throw new ConflictException(
            `Contact merge ${id} cannot be undone: the ${field} of contact ${source.id.toHexString()} belongs to contact ${holder._id.toHexString()} now`,
          );
        }
      }
    }
    const entry = stageAudit(origin, 'contact.merge_undone', { type: 'contact', id: plan.target.id.toHexString() }, { mergeId: [id, null] });
    const undoing = await this.merges.transition(companyId, merge._id, 'done', 'undoing', {}, [], entry);
    if (!undoing) throw new ConflictException(`Contact merge ${id} is being undone already`);
    this.audit.written(companyId, this.merges.collectionName, merge._id, [entry]);
    await this.runner.arm(companyId, merge._id);
    await this.runner.finish(companyId, undoing);
    const [after, ...sources] = await Promise.all(
      [plan.target.id, ...plan.sources.map((source) => source.id)].map((contact) => this.contactRecords.findById(companyId, contact.toHexString())),
    );
    return {
      mergeId: id,
      contact: ContactView.from(after!),
      sources: sources.filter((source) => source !== null).map((source) => ContactView.from(source)),
    };
  }

  /**
   * The live contacts of `ids`, in order, in one read; the first missing or merged one answers the 404 or 410 of
   * ContactsService.existing (which reads it again, on that failing path only).
   */
  private async existingAll(companyId: CompanyId, ids: string[]): Promise<Stored<Contact>[]> {
    const found = await this.contactRecords.find(companyId, { _id: { $in: ids } });
    const byId = new Map(found.map((contact) => [contact._id.toHexString(), contact]));
    const contacts: Stored<Contact>[] = [];
    for (const id of ids) {
      const contact = byId.get(id);
      contacts.push(contact && !contact.mergedInto ? contact : await this.contacts.existing(companyId, id));
    }
    return contacts;
  }

  private busy(contactId: string): ConflictException {
    return new ConflictException(`Contact ${contactId} is in a merge or undo under way; try again when it is done`);
  }
}
