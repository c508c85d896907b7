import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

/**
 * At most one per company: whoever holds it is the only one choosing agents for that company, in
 * any process, so two hand-offs at once cannot both count an agent below capacity and both assign it.
 */
@Schema({ collection: 'assignment_leases' })
export class AssignmentLease {
  /** A random token of the holder, so only it releases the lease. */
  @Prop({ required: true })
  holder: string;

  /** A crashed holder's lease lapses at this time. */
  @Prop({ type: Date, required: true })
  expiresAt: Date;
}

export const AssignmentLeaseSchema = SchemaFactory.createForClass(AssignmentLease);
AssignmentLeaseSchema.plugin(tenantScopePlugin);
AssignmentLeaseSchema.index({ companyId: 1 }, { unique: true });
