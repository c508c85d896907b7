import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import type { Priority } from '../conversations/conversation.schema.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import type { AssignmentStrategy } from '../settings/settings.schema.js';
import { auditedPlugin } from '../audit/audited.js';

export const FLOW_STEP_TYPES = ['send_message', 'send_template', 'assign', 'set_priority', 'add_tags', 'handoff', 'close'] as const;
export type FlowStepType = (typeof FLOW_STEP_TYPES)[number];
export const FLOW_TRIGGER_TYPES = ['manual', 'inbound_message'] as const;
export type FlowTriggerType = (typeof FLOW_TRIGGER_TYPES)[number];
export const MAX_FLOW_STEPS = 50;
/** Flows a company may have: bounds what one inbound message can cost to match. */
export const MAX_FLOWS_PER_COMPANY = 100;

/** One step of a built-in type, as validated on write (dto/flow-steps.dto.ts) and run by FlowRunner. */
export type BuiltInFlowStep =
  | { type: 'send_message'; text: string }
  | { type: 'send_template'; template: { name: string; language: string; variables?: string[] } }
  | { type: 'assign'; agentId?: string; strategy?: AssignmentStrategy }
  | { type: 'set_priority'; priority: Priority }
  | { type: 'add_tags'; tags: string[] }
  | { type: 'handoff' }
  | { type: 'close'; reason?: string };

/** A step of a type another module added (steps/flow-step-definition.decorator.ts): its fields are its class's. */
export interface CustomFlowStep {
  type: string;
  [field: string]: unknown;
}

export type FlowStep = BuiltInFlowStep | CustomFlowStep;

export function isBuiltInStep(step: FlowStep): step is BuiltInFlowStep {
  return (FLOW_STEP_TYPES as readonly string[]).includes(step.type);
}

export interface FlowTrigger {
  type: FlowTriggerType;
  /** Lower-cased; empty means every inbound message (for `inbound_message`). */
  keywords: string[];
}

/** An automation: steps run in order on a conversation, by hand or on an inbound message (contract section 5). */
@Schema({ collection: 'flows', timestamps: true, minimize: false })
export class Flow {
  @Prop({ required: true, trim: true, maxlength: 200 })
  name: string;

  @Prop({ type: String, maxlength: 1000, default: null })
  description: string | null;

  @Prop({ required: true, default: true })
  isActive: boolean;

  @Prop({ type: Object, required: true })
  trigger: FlowTrigger;

  @Prop({ type: [Object], required: true })
  steps: FlowStep[];
}

export const FlowSchema = SchemaFactory.createForClass(Flow);
FlowSchema.plugin(tenantScopePlugin);
FlowSchema.plugin(auditedPlugin);
FlowSchema.plugin(removablePlugin);
FlowSchema.index({ companyId: 1, _id: -1 });
FlowSchema.index({ companyId: 1, isActive: 1, _id: -1 });
// The flows an inbound message may trigger, in creation order.
FlowSchema.index({ companyId: 1, 'trigger.type': 1, isActive: 1, _id: 1 });
