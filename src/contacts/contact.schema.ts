import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

/** A customer of the company (contract section 5). */
@Schema({ collection: 'contacts', timestamps: true, minimize: false })
export class Contact {
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

  /** Free-form key/values from the integrator (keys never start with "$": the global pipe refuses them). */
  @Prop({ type: Object, default: {} })
  attributes: Record<string, unknown>;

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
}

export const ContactSchema = SchemaFactory.createForClass(Contact);
ContactSchema.plugin(tenantScopePlugin);
ContactSchema.index({ companyId: 1, _id: -1 });
ContactSchema.index({ companyId: 1, tags: 1, _id: -1 });
ContactSchema.index({ companyId: 1, email: 1 }, { unique: true, partialFilterExpression: { email: { $type: 'string' } } });
ContactSchema.index({ companyId: 1, phone: 1 }, { unique: true, partialFilterExpression: { phone: { $type: 'string' } } });
// Duplicate candidates: contacts by their name key.
ContactSchema.index({ companyId: 1, nameKey: 1, _id: 1 }, { partialFilterExpression: { nameKey: { $type: 'string' } } });
// A merged source's e-mail and phone, which keep leading to its target.
ContactSchema.index({ companyId: 1, 'mergedIdentity.email': 1 }, { partialFilterExpression: { 'mergedIdentity.email': { $type: 'string' } } });
ContactSchema.index({ companyId: 1, 'mergedIdentity.phone': 1 }, { partialFilterExpression: { 'mergedIdentity.phone': { $type: 'string' } } });
