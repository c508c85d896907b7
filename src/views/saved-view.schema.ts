import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, type Types } from 'mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import type { FilterModel } from '../filters/index.js';
import { writeGenerationOf } from '../database/caching/write-generation.js';

export const VIEW_VISIBILITIES = ['private', 'company'] as const;
export type ViewVisibility = (typeof VIEW_VISIBILITIES)[number];
export const VIEW_MODELS = ['conversation', 'contact'] as const;
/** Per agent (its private views) and per company (its company views), contract section 20. */
export const MAX_PRIVATE_VIEWS_PER_AGENT = 50;
export const MAX_COMPANY_VIEWS = 100;

/** A saved filter of conversations or contacts, private to its owner or shared with the company (contract section 20). */
@Schema({ collection: 'saved_views', timestamps: true, minimize: false })
export class SavedView {
  @Prop({ type: String, required: true, maxlength: 100 })
  name: string;

  @Prop({ type: String, enum: VIEW_MODELS, required: true })
  model: FilterModel;

  /** The filter as the client wrote it (checked when saved, and again when run: definitions may have changed). */
  @Prop({ type: Object, required: true })
  filter: Record<string, unknown>;

  @Prop({ type: String, required: true })
  sort: string;

  @Prop({ type: String, enum: VIEW_VISIBILITIES, required: true })
  visibility: ViewVisibility;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  ownerId: Types.ObjectId;
}

export const SavedViewSchema = SchemaFactory.createForClass(SavedView);
SavedViewSchema.plugin(tenantScopePlugin);
SavedViewSchema.plugin(auditedPlugin);
SavedViewSchema.plugin(removablePlugin);
/** Writes of this process to the views: a view cached for its pages is read again (SavedViewsRepository). */
export const SAVED_VIEW_WRITES = writeGenerationOf(SavedViewSchema);
// The views an agent sees: the company's, and its own private ones; each also counted against its cap.
SavedViewSchema.index({ companyId: 1, visibility: 1, ownerId: 1, _id: 1 });
