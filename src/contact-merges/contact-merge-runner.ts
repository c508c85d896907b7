import { ConflictException, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import type { Types } from 'mongoose';
import { contactSummaryOf } from '../contacts/contact-summary-changed.js';
import type { Contact } from '../contacts/contact.schema.js';
import { ContactView } from '../contacts/contact.view.js';
import { ContactsRepository } from '../contacts/contacts.repository.js';
import { nameKeyOf } from '../contacts/name-key.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { duplicateKeyField, isDuplicateKeyError } from '../database/mongo-errors.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { stageEvent } from '../events/pending-event.schema.js';
import { Clock } from '../lanes/clock.js';
import { DurableTimers } from '../lanes/durable-timers.js';
import type { ContactMerge, ContactValues, MergePlan } from './contact-merge.schema.js';
import { ContactMergesRepository } from './contact-merges.repository.js';

/** Kind of the durable timer that finishes a merge or an undo its process left half done. */
export const CONTACT_MERGE_TIMER = 'contact-merge';
/** How long a merge or an undo may take in its request before another process takes it for abandoned and finishes it. */
export const MERGE_RESUME_AFTER_MS = 10_000;
/** The unique fields a merged source gives up (kept as `mergedIdentity`) and an undo gives back, in the order checked. */
export const IDENTITY_FIELDS = ['email', 'phone'] as const;
const FILLED_FIELDS = ['name', 'email', 'phone'] as const;

export class MergeRefused extends ConflictException {}

function valuesOf(contact: Stored<Contact>): ContactValues {
  return {
    id: contact._id,
    name: contact.name ?? null,
    email: contact.email ?? null,
    phone: contact.phone ?? null,
    tags: contact.tags ?? [],
    attributes: contact.attributes ?? {},
  };
}

/** Decides from the contacts as they are what the target gains: the contract's rules for fields, tags and attributes. */
export function planMerge(target: ContactValues, sources: ContactValues[]): MergePlan {
  const filled: MergePlan['filled'] = {};
  for (const field of FILLED_FIELDS) {
    const value = target[field] ? null : sources.find((source) => source[field])?.[field];
    if (value) filled[field] = value;
  }
  const addedTags = [...new Set(sources.flatMap((source) => source.tags))].filter((tag) => !target.tags.includes(tag));
  const addedAttributes = [...new Set(sources.flatMap((source) => Object.keys(source.attributes)))].filter((key) => !(key in target.attributes));
  return { target, sources, filled, addedTags, addedAttributes };
}

/** The target's attributes after the merge: its own win; a key it lacks comes from the first source that has it. */
function mergedAttributes(plan: MergePlan): Record<string, unknown> {
  const attributes = { ...plan.target.attributes };
  for (const key of plan.addedAttributes) attributes[key] = plan.sources.find((source) => key in source.attributes)!.attributes[key];
  return attributes;
}

/**
 * The steps of a merge and of its undo. Every step can be applied again with the same result, so a merge or undo
 * whose process died is finished by running its steps from the start: the request does it at once, and a durable
 * timer set before the first step does it after a crash. Contacts are locked (`mergeLock`) for the whole run: a
 * second merge or undo touching one of them answers 409 instead of interleaving.
 */
@Injectable()
export class ContactMergeRunner implements OnModuleInit {
  private readonly logger = new Logger(ContactMergeRunner.name);

  constructor(
    private readonly merges: ContactMergesRepository,
    private readonly contacts: ContactsRepository,
    private readonly conversations: ConversationsRepository,
    private readonly conversationsService: ConversationsService,
    private readonly timers: DurableTimers,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.timers.register(CONTACT_MERGE_TIMER, async (timer) => {
      const merge = await this.merges.findById(timer.companyId, timer.key);
      if (merge) await this.finish(timer.companyId, merge);
    });
  }

  /** Arms the crash recovery of merge `id`: due unless the run finishes (and cancels it) first. */
  async arm(companyId: CompanyId, id: Types.ObjectId): Promise<void> {
    await this.timers.set(companyId, CONTACT_MERGE_TIMER, id.toHexString(), new Date(this.clock.now().getTime() + MERGE_RESUME_AFTER_MS));
  }

  /** Runs what is left of the merge or undo. MergeRefused when its contacts are taken. */
  async finish(companyId: CompanyId, merge: Stored<ContactMerge>): Promise<void> {
    if (merge.status === 'running') await this.runMerge(companyId, merge);
    else if (merge.status === 'undoing') await this.runUndo(companyId, merge);
    await this.unlock(companyId, merge);
    await this.timers.cancel(companyId, CONTACT_MERGE_TIMER, merge._id.toHexString());
  }

  private async runMerge(companyId: CompanyId, merge: Stored<ContactMerge>): Promise<void> {
    if (!(await this.lock(companyId, merge))) {
      // Its contacts were never all its own, so nothing of it was applied: it ends here, refused.
      await this.unlock(companyId, merge);
      await this.merges.deleteOne(companyId, { _id: merge._id, plan: null });
      await this.timers.cancel(companyId, CONTACT_MERGE_TIMER, merge._id.toHexString());
      throw new MergeRefused('A merge or undo of one of these contacts is under way; try again when it is done');
    }
    const plan = merge.plan ?? (await this.recordPlan(companyId, merge));
    const target = plan.target.id;
    for (const source of plan.sources) {
      const mergedIdentity = Object.fromEntries(IDENTITY_FIELDS.filter((field) => source[field]).map((field) => [field, source[field]]));
      await this.contacts.updateOne(
        companyId,
        { _id: source.id, mergeLock: merge._id },
        { $set: { mergedInto: target, mergeId: merge._id, mergedIdentity }, $unset: { email: 1, phone: 1, nameKey: 1 } },
      );
    }
    const name = plan.target.name ?? plan.filled.name;
    const merged = await this.contacts.updateOne(
      companyId,
      { _id: target, mergeLock: merge._id },
      {
        $set: {
          ...plan.filled,
          tags: [...plan.target.tags, ...plan.addedTags],
          attributes: mergedAttributes(plan),
          ...(nameKeyOf(name) ? { nameKey: nameKeyOf(name) } : {}),
        },
      },
    );
    if (!merged) throw new Error(`Contact merge ${merge._id.toHexString()}: its target is not locked by it`);
    const summary = contactSummaryOf(merged);
    for (const source of plan.sources) await this.moveConversations(companyId, merge._id, source.id, merged, summary);
    await this.conversations.setContact(companyId, target, summary);
    // Null when a concurrent run of the same merge got there first: it is done all the same.
    await this.merges.transition(companyId, merge._id, 'running', 'done', { mergedAt: this.clock.now() }, [
      stageEvent('contact.merged', {
        contact: ContactView.from(merged),
        sourceIds: plan.sources.map((source) => source.id.toHexString()),
        mergeId: merge._id.toHexString(),
      }),
    ]);
  }

  /**
   * The source's conversations go to the target. One open on a channel where the target has one open is closed
   * first (a contact has one open conversation per channel), and moves closed, with its history.
   */
  private async moveConversations(
    companyId: CompanyId,
    mergeId: Types.ObjectId,
    source: Types.ObjectId,
    target: Stored<Contact>,
    summary: ReturnType<typeof contactSummaryOf>,
  ): Promise<void> {
    for (const open of await this.conversations.openOfContact(companyId, source)) {
      if (!(await this.conversations.findOpen(companyId, target._id, open.channel))) continue;
      try {
        await this.conversationsService.close(companyId, open._id.toHexString(), `merged into contact ${target._id.toHexString()}`, {
          eventId: `evt_merge_${mergeId.toHexString()}_${open._id.toHexString()}`,
        });
      } catch (error) {
        // Closed meanwhile: the move below finds it closed all the same.
        this.logger.debug({ err: error }, `Conversation ${open._id.toHexString()} was not closed by the merge`);
      }
    }
    await this.conversations.moveToContact(companyId, source, target._id, summary, mergeId);
  }

  private async recordPlan(companyId: CompanyId, merge: Stored<ContactMerge>): Promise<MergePlan> {
    const ids = [merge.targetId, ...merge.sourceIds];
    const found = await this.contacts.find(companyId, { _id: { $in: ids } });
    const byId = new Map(found.map((contact) => [contact._id.toHexString(), contact]));
    const values = ids.map((id) => byId.get(id.toHexString()));
    if (values.some((contact) => !contact)) throw new Error(`Contact merge ${merge._id.toHexString()}: a locked contact is missing`);
    const [target, ...sources] = values.map((contact) => valuesOf(contact!));
    const plan = planMerge(target, sources);
    const recorded = await this.merges.recordPlan(companyId, merge._id, plan);
    // A concurrent run of the same merge recorded its plan first (from the same, locked, contacts): that one holds.
    return recorded?.plan ?? (await this.merges.findById(companyId, merge._id.toHexString()))!.plan!;
  }

  private async runUndo(companyId: CompanyId, merge: Stored<ContactMerge>): Promise<void> {
    if (!(await this.lock(companyId, merge))) {
      await this.unlock(companyId, merge);
      await this.merges.transition(companyId, merge._id, 'undoing', 'done');
      await this.timers.cancel(companyId, CONTACT_MERGE_TIMER, merge._id.toHexString());
      throw new MergeRefused('A merge or undo of one of these contacts is under way; try again when it is done');
    }
    const plan = merge.plan!;
    const target = plan.target.id;
    // The target lets go of what the merge gave it first: a source's e-mail or phone is unique to one contact.
    for (const field of FILLED_FIELDS) {
      const value = plan.filled[field];
      if (value)
        await this.contacts.updateOne(
          companyId,
          { _id: target, [field]: value },
          { $unset: { [field]: 1, ...(field === 'name' ? { nameKey: 1 } : {}) } },
        );
    }
    const unsetAttributes = Object.fromEntries(plan.addedAttributes.map((key) => [`attributes.${key}`, 1]));
    // The undo's last write of the target (the sources' steps below leave it alone): the target as the undo ends it.
    const after = await this.contacts.updateOne(
      companyId,
      { _id: target },
      { $pullAll: { tags: plan.addedTags }, ...(plan.addedAttributes.length ? { $unset: unsetAttributes } : {}) },
    );
    for (const source of plan.sources) {
      const restored = await this.restoreSource(companyId, merge._id, source);
      await this.conversations.moveBackToContact(companyId, merge._id, source.id, contactSummaryOf(restored ?? source));
    }
    await this.conversations.setContact(companyId, target, contactSummaryOf(after!));
    await this.merges.transition(companyId, merge._id, 'undoing', 'undone', { undoneAt: this.clock.now() }, [
      stageEvent('contact.merge_undone', {
        mergeId: merge._id.toHexString(),
        contact: ContactView.from(after!),
        sourceIds: plan.sources.map((source) => source.id.toHexString()),
      }),
    ]);
  }

  /**
   * The source gets its own values back and is no tombstone any more. An e-mail or phone taken by another contact
   * between the undo's check and this step stays with that contact (the undo goes on without it).
   */
  private async restoreSource(companyId: CompanyId, mergeId: Types.ObjectId, source: ContactValues): Promise<Stored<Contact> | null> {
    const own: Record<string, unknown> = { tags: source.tags, attributes: source.attributes };
    for (const field of ['name', ...IDENTITY_FIELDS] as const) if (source[field]) own[field] = source[field];
    const nameKey = nameKeyOf(source.name);
    if (nameKey) own.nameKey = nameKey;
    for (;;) {
      try {
        const restored = await this.contacts.updateOne(
          companyId,
          { _id: source.id, mergeId },
          { $set: own, $unset: { mergedInto: 1, mergeId: 1, mergedIdentity: 1 } },
        );
        return restored ?? (await this.contacts.findById(companyId, source.id.toHexString()));
      } catch (error) {
        const field = isDuplicateKeyError(error) ? duplicateKeyField(error) : null;
        if (!field || !(field in own)) throw error;
        this.logger.warn(`Contact ${source.id.toHexString()} comes back from a merge without its ${field}: another contact took it`);
        delete own[field];
      }
    }
  }

  /** Locks every contact of the merge for it, atomically per contact; false when another run holds one of them. */
  private async lock(companyId: CompanyId, merge: Stored<ContactMerge>): Promise<boolean> {
    const ids = [merge.targetId, ...merge.sourceIds];
    await this.contacts.updateMany(
      companyId,
      { _id: { $in: ids }, mergeLock: { $in: [null, merge._id] }, $or: [{ mergedInto: null }, { mergeId: merge._id }] },
      { $set: { mergeLock: merge._id } },
    );
    return (await this.contacts.countPlain(companyId, { _id: { $in: ids }, mergeLock: merge._id })) === ids.length;
  }

  private async unlock(companyId: CompanyId, merge: Stored<ContactMerge>): Promise<void> {
    await this.contacts.updateMany(
      companyId,
      { _id: { $in: [merge.targetId, ...merge.sourceIds] }, mergeLock: merge._id },
      { $unset: { mergeLock: 1 } },
    );
  }
}
