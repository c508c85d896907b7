import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';
import { auditedPlugin } from '../audit/audited.js';

/** A customer of the company (contract section 5); its changes carry their events (contract section 20). */
@Schema({ collection: 'contacts', timestamps: true, minimize: false })
export class Contact extends EventSource {
  @Prop({ type: String, trim: true, maxlength: 200 })
  name?: string;

  /** Lower-cased; unique within the company. */
  @Prop({ type: String, trim: true, lowercase: true, maxlength: 320 })
  email?: string;

  /** Normalised to "+" and digits (see normalizePhone); unique within the company. */
  @Prop({ type: String, maxlength: 32 })
  phone?: string;

  @Prop({ type: [String], default: [] })
  tags: string[];

  /** Values of the company's contact attribute definitions (contract section 20); dates stored as Dates. */
  @Prop({ type: Object, default: {} })
  attributes: Record<string, unknown>;

  /**
   * Moves with every change that emits an event: a change is applied only to the revision it was computed from, so
   * the snapshot its event carries is exactly the record it leaves.
   */
  @Prop({ type: Number, default: 0 })
  revision?: number;

  /**
   * Set by the write that stages `contact.deleted`; the record is removed once the event is logged. Only a process
   * that died in between leaves one, which no read shows (ContactsRepository).
   */
  @Prop({ type: Date })
  deletedAt?: Date;
  /** The name compared for duplicates (nameKeyOf): lower-cased, without accents or spaces; absent without a name. */
  @Prop({ type: String })
  nameKey?: string;

  /** Set on a merged source (contract section 22): the target it was merged into; it answers 410 from then on. */
  @Prop({ type: SchemaTypes.ObjectId })
  mergedInto?: Types.ObjectId;

  /** The merge that made this contact a tombstone (see mergedInto). */
  @Prop({ type: SchemaTypes.ObjectId })
  mergeId?: Types.ObjectId;

  /** A merged source's e-mail and phone, out of the unique fields, still leading to its target. */
  @Prop({ type: Object })
  mergedIdentity?: { email?: string; phone?: string };

  /** The merge or undo under way on this contact: set atomically, so a second one on the same contact answers 409. */
  @Prop({ type: SchemaTypes.ObjectId })
  mergeLock?: Types.ObjectId;
  /** Set by an admin (contract section 23): erasure is refused (409) and retention skips its conversations. */
  @Prop({ type: Boolean })
  legalHold?: boolean;

  /** When its personal data was erased (contract section 23): it stays as an id, reads show the erased shape, writes 410. */
  @Prop({ type: Date })
  erasedAt?: Date;
}

export const ContactSchema = SchemaFactory.createForClass(Contact);
ContactSchema.plugin(tenantScopePlugin);
indexPendingEvents(ContactSchema);
ContactSchema.plugin(auditedPlugin);
ContactSchema.index({ companyId: 1, _id: -1 });
ContactSchema.index({ companyId: 1, tags: 1, _id: -1 });
ContactSchema.index({ companyId: 1, email: 1 }, { unique: true, partialFilterExpression: { email: { $type: 'string' } } });
ContactSchema.index({ companyId: 1, phone: 1 }, { unique: true, partialFilterExpression: { phone: { $type: 'string' } } });
// Filters and search (contract section 20): name (A to Z), creation time, and custom attributes on MongoDB 7's
// compound wildcard index (one key per attribute a contact holds).
ContactSchema.index({ companyId: 1, 'attributes.$**': 1 });
ContactSchema.index({ companyId: 1, name: 1, _id: 1 });
ContactSchema.index({ companyId: 1, createdAt: 1 });
// Duplicate candidates: contacts by their name key.
ContactSchema.index({ companyId: 1, nameKey: 1, _id: 1 }, { partialFilterExpression: { nameKey: { $type: 'string' } } });
// A merged source's e-mail and phone, which keep leading to its target.
ContactSchema.index({ companyId: 1, 'mergedIdentity.email': 1 }, { partialFilterExpression: { 'mergedIdentity.email': { $type: 'string' } } });
ContactSchema.index({ companyId: 1, 'mergedIdentity.phone': 1 }, { partialFilterExpression: { 'mergedIdentity.phone': { $type: 'string' } } });
