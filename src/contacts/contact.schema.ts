import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';

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
}

export const ContactSchema = SchemaFactory.createForClass(Contact);
ContactSchema.plugin(tenantScopePlugin);
indexPendingEvents(ContactSchema);
ContactSchema.index({ companyId: 1, _id: -1 });
ContactSchema.index({ companyId: 1, tags: 1, _id: -1 });
ContactSchema.index({ companyId: 1, email: 1 }, { unique: true, partialFilterExpression: { email: { $type: 'string' } } });
ContactSchema.index({ companyId: 1, phone: 1 }, { unique: true, partialFilterExpression: { phone: { $type: 'string' } } });
// Filters and search (contract section 20): name (A to Z), creation time, and custom attributes on MongoDB 7's
// compound wildcard index (one key per attribute a contact holds).
ContactSchema.index({ companyId: 1, 'attributes.$**': 1 });
ContactSchema.index({ companyId: 1, name: 1, _id: 1 });
ContactSchema.index({ companyId: 1, createdAt: 1 });
