import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Priority } from '../conversations/conversation.schema.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { auditedPlugin } from '../audit/audited.js';

/** Policies a company may have: bounds what matching a conversation costs. */
export const MAX_SLA_POLICIES_PER_COMPANY = 100;

/** Which conversations a policy applies to; an empty list matches any value. */
export interface SlaConditions {
  priorities: Priority[];
  /** Lower-cased channel keys. */
  channels: string[];
}

/** Response-time targets for the conversations it matches (contract section 16). */
@Schema({ collection: 'sla_policies', timestamps: true, minimize: false })
export class SlaPolicy {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ required: true, default: true })
  isActive: boolean;

  @Prop({ type: Object, required: true })
  conditions: SlaConditions;

  @Prop({ type: Number, default: null })
  firstResponseSeconds: number | null;

  @Prop({ type: Number, default: null })
  nextResponseSeconds: number | null;

  @Prop({ type: Number, default: null })
  resolutionSeconds: number | null;

  /** Only open business hours count towards the targets. */
  @Prop({ required: true, default: false })
  businessHoursOnly: boolean;

  @Prop({ type: Number, default: null })
  warnBeforeSeconds: number | null;
}

export const SlaPolicySchema = SchemaFactory.createForClass(SlaPolicy);
SlaPolicySchema.plugin(tenantScopePlugin);
SlaPolicySchema.plugin(auditedPlugin);
SlaPolicySchema.plugin(removablePlugin);
SlaPolicySchema.index({ companyId: 1, _id: -1 });
// The active policies a conversation is matched against, oldest first.
SlaPolicySchema.index({ companyId: 1, isActive: 1, _id: 1 });
