import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { auditedPlugin } from '../audit/audited.js';

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

  /** Set by an admin (contract section 23): erasure is refused (409) and retention skips its conversations. */
  @Prop({ type: Boolean })
  legalHold?: boolean;

  /** When its personal data was erased (contract section 23): it stays as an id, reads show the erased shape, writes 410. */
  @Prop({ type: Date })
  erasedAt?: Date;
}

export const ContactSchema = SchemaFactory.createForClass(Contact);
ContactSchema.plugin(tenantScopePlugin);
ContactSchema.plugin(auditedPlugin);
ContactSchema.index({ companyId: 1, _id: -1 });
ContactSchema.index({ companyId: 1, tags: 1, _id: -1 });
ContactSchema.index({ companyId: 1, email: 1 }, { unique: true, partialFilterExpression: { email: { $type: 'string' } } });
ContactSchema.index({ companyId: 1, phone: 1 }, { unique: true, partialFilterExpression: { phone: { $type: 'string' } } });
