import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';
import { auditedPlugin } from '../audit/audited.js';

export const TEMPLATE_CATEGORIES = ['marketing', 'utility', 'authentication'] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];
/** `pending` until the channel connector reports the channel's verdict. */
export const TEMPLATE_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];
export const TEMPLATE_NAME_PATTERN = /^[a-z0-9_]{1,512}$/;
export const MAX_TEMPLATE_BODY_LENGTH = 1024;

/**
 * A message the channel approves in advance (contract section 17), the only kind a channel with a reply window lets
 * through outside it. Its status changes carry `template.status_changed`.
 */
@Schema({ collection: 'message_templates', timestamps: true })
export class MessageTemplate extends EventSource {
  /** The key of the channel it is approved on. */
  @Prop({ required: true })
  channel: string;

  @Prop({ required: true })
  name: string;

  /** A BCP 47 tag, in canonical case. */
  @Prop({ required: true })
  language: string;

  @Prop({ type: String, enum: TEMPLATE_CATEGORIES, required: true })
  category: TemplateCategory;

  @Prop({ required: true, maxlength: MAX_TEMPLATE_BODY_LENGTH })
  body: string;

  /** How many variables a send gives: the body's placeholders {{1}}..{{n}}. */
  @Prop({ required: true })
  placeholderCount: number;

  @Prop({ type: String, enum: TEMPLATE_STATUSES, required: true })
  status: TemplateStatus;

  /** Why the channel rejected it; only while `rejected`. */
  @Prop({ type: String, maxlength: 1000, default: null })
  rejectionReason: string | null;
}

export const MessageTemplateSchema = SchemaFactory.createForClass(MessageTemplate);
MessageTemplateSchema.plugin(tenantScopePlugin);
MessageTemplateSchema.plugin(auditedPlugin);
MessageTemplateSchema.plugin(removablePlugin, { freed: 'name' });
indexPendingEvents(MessageTemplateSchema);
// One template per channel, name and language; also the lookup of a send by name.
MessageTemplateSchema.index({ companyId: 1, channel: 1, name: 1, language: 1 }, { unique: true });
// The lists: newest first, filtered by channel, status, both or neither.
MessageTemplateSchema.index({ companyId: 1, _id: -1 });
MessageTemplateSchema.index({ companyId: 1, channel: 1, _id: -1 });
MessageTemplateSchema.index({ companyId: 1, status: 1, _id: -1 });
MessageTemplateSchema.index({ companyId: 1, channel: 1, status: 1, _id: -1 });
