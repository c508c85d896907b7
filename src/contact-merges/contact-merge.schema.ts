import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';

/** `running` → `done` → `undoing` → `undone`; each step of a running merge or undo can be applied again. */
export const MERGE_STATUSES = ['running', 'done', 'undoing', 'undone'] as const;
export type MergeStatus = (typeof MERGE_STATUSES)[number];

/** A contact's own values as they were before a merge: what an undo gives it back. */
export interface ContactValues {
  id: Types.ObjectId;
  name: string | null;
  email: string | null;
  phone: string | null;
  tags: string[];
  attributes: Record<string, unknown>;
}

/** What the merge changes on the target, decided once from `before` so that a resumed merge applies the same. */
export interface MergePlan {
  target: ContactValues;
  sources: ContactValues[];
  /** The target's empty name, e-mail and phone the merge fills, with the value each gets. */
  filled: { name?: string; email?: string; phone?: string };
  /** Tags and attribute keys the target gains from the sources. */
  addedTags: string[];
  addedAttributes: string[];
}

/**
 * One contact merge (contract section 22), its durable record: the request runs its steps, and if the process dies on
 * the way a durable timer (ContactMergeRunner) finishes them. Its events are written with its status changes.
 */
@Schema({ collection: 'contact_merges', timestamps: true })
export class ContactMerge extends EventSource {
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  targetId: Types.ObjectId;

  @Prop({ type: [SchemaTypes.ObjectId], required: true })
  sourceIds: Types.ObjectId[];

  @Prop({ type: String, enum: MERGE_STATUSES, required: true })
  status: MergeStatus;

  /** Who asked for it. */
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  agentId: Types.ObjectId;

  /** Set once every contact is locked, before anything changes: the values it started from and what it changes. */
  @Prop({ type: Object, default: null })
  plan: MergePlan | null;

  @Prop({ type: Date, default: null })
  mergedAt: Date | null;

  @Prop({ type: Date, default: null })
  undoneAt: Date | null;
}

export const ContactMergeSchema = SchemaFactory.createForClass(ContactMerge);
ContactMergeSchema.plugin(tenantScopePlugin);
ContactMergeSchema.plugin(auditedPlugin);
indexPendingEvents(ContactMergeSchema);
ContactMergeSchema.index({ companyId: 1, _id: -1 });
