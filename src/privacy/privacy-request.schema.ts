import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';

export const PRIVACY_REQUEST_TYPES = ['export', 'erase'] as const;
export type PrivacyRequestType = (typeof PRIVACY_REQUEST_TYPES)[number];
export const PRIVACY_REQUEST_STATUSES = ['pending', 'running', 'completed', 'failed', 'cancelled'] as const;
export type PrivacyRequestStatus = (typeof PRIVACY_REQUEST_STATUSES)[number];

/**
 * An export or an erasure of one contact's data (contract section 23), carried out in the background by a durable
 * timer (see ContactErasure, ContactExport). `step` is how far a multi-step erasure got: each step is idempotent, so
 * a run taken over after a crash goes on from there. Finishing writes its events with it.
 */
@Schema({ collection: 'privacy_requests', timestamps: true })
export class PrivacyRequest extends EventSource {
  @Prop({ type: String, enum: PRIVACY_REQUEST_TYPES, required: true })
  type: PrivacyRequestType;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  contactId: Types.ObjectId;

  @Prop({ type: String, enum: PRIVACY_REQUEST_STATUSES, required: true, default: 'pending' })
  status: PrivacyRequestStatus;

  @Prop({ type: String, default: null })
  reason: string | null;

  /** Export: private notes too. */
  @Prop({ type: Boolean, default: false })
  includeNotes: boolean;

  /** When it is carried out (an erasure waits PRIVACY_ERASE_DELAY_HOURS). */
  @Prop({ type: Date, required: true })
  dueAt: Date;

  /** Erasure: the steps done so far. */
  @Prop({ type: Number, default: 0 })
  step: number;

  /** Export: the ZIP in GridFS; while running, the file the attempt under way writes (each attempt its own). */
  @Prop({ type: SchemaTypes.ObjectId, default: null })
  fileId: Types.ObjectId | null;

  /** Why it failed (a legal hold set while it waited). */
  @Prop({ type: String, default: null })
  failureReason: string | null;

  @Prop({ type: Date, default: null })
  completedAt: Date | null;

  /** Export: until when a builder holds it (renewed as it goes; a dead builder's lapses). */
  @Prop({ type: Date, default: null })
  leaseUntil: Date | null;

  createdAt: Date;
}

export const PrivacyRequestSchema = SchemaFactory.createForClass(PrivacyRequest);
PrivacyRequestSchema.plugin(tenantScopePlugin);
PrivacyRequestSchema.plugin(auditedPlugin);
indexPendingEvents(PrivacyRequestSchema);
PrivacyRequestSchema.index({ companyId: 1, _id: -1 });
PrivacyRequestSchema.index({ companyId: 1, contactId: 1, _id: -1 });
PrivacyRequestSchema.index({ companyId: 1, type: 1, status: 1, _id: -1 });
