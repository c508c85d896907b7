import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { writeGenerationOf } from '../database/caching/write-generation.js';

export const ATTRIBUTE_MODELS = ['contact', 'conversation'] as const;
export type AttributeModel = (typeof ATTRIBUTE_MODELS)[number];
export const ATTRIBUTE_TYPES = ['text', 'number', 'boolean', 'date', 'list'] as const;
export type AttributeType = (typeof ATTRIBUTE_TYPES)[number];
export const ATTRIBUTE_KEY_PATTERN = /^[a-z][a-z0-9_]{0,63}$/;
/** Per company and model (contract section 20). */
export const MAX_ATTRIBUTE_DEFINITIONS_PER_MODEL = 100;
export const MAX_LIST_OPTIONS = 200;
export const MAX_TEXT_ATTRIBUTE_LENGTH = 1000;

/** A typed custom attribute of contacts or conversations (contract section 20); model, key and type never change. */
@Schema({ collection: 'attribute_definitions', timestamps: true })
export class AttributeDefinition {
  @Prop({ type: String, enum: ATTRIBUTE_MODELS, required: true })
  model: AttributeModel;

  /**
   * `[a-z][a-z0-9_]{0,63}` through the API; a definition the one-time migration made for a key contacts already held
   * keeps that key as it was stored.
   */
  @Prop({ type: String, required: true, maxlength: 100 })
  key: string;

  @Prop({ type: String, required: true, maxlength: 100 })
  label: string;

  @Prop({ type: String, enum: ATTRIBUTE_TYPES, required: true })
  type: AttributeType;

  /** The values a `list` takes; empty for the other types. */
  @Prop({ type: [String], default: [] })
  options: string[];

  @Prop({ type: String, maxlength: 500, default: null })
  description: string | null;

  /** An archived key keeps its stored values but takes no new one (Intercom's way instead of a type change). */
  @Prop({ type: Boolean, default: false })
  archived: boolean;
}

export const AttributeDefinitionSchema = SchemaFactory.createForClass(AttributeDefinition);
AttributeDefinitionSchema.plugin(tenantScopePlugin);
AttributeDefinitionSchema.plugin(auditedPlugin);
AttributeDefinitionSchema.plugin(removablePlugin, { freed: 'key' });
/** Writes of this process to the definitions: the rules cached from them are read again (AttributeDefinitionsRepository). */
export const ATTRIBUTE_DEFINITION_WRITES = writeGenerationOf(AttributeDefinitionSchema);
// Unique keys per model (409); every read is a company's definitions of one model, in key order.
AttributeDefinitionSchema.index({ companyId: 1, model: 1, key: 1 }, { unique: true });
