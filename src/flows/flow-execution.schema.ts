import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import type { FlowExecutionStepResult } from '../events/domain-events.js';
import { FLOW_TRIGGER_TYPES, type FlowTriggerType } from './flow.schema.js';

export const FLOW_EXECUTION_STATUSES = ['completed', 'failed'] as const;
export type FlowExecutionStatus = (typeof FLOW_EXECUTION_STATUSES)[number];

/** One run of a flow on a conversation; analytics counts them (flowsExecuted) by createdAt. */
@Schema({ collection: 'flow_executions', timestamps: true })
export class FlowExecution {
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  flowId: Types.ObjectId;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  conversationId: Types.ObjectId;

  @Prop({ type: String, enum: FLOW_EXECUTION_STATUSES, required: true })
  status: FlowExecutionStatus;

  @Prop({ type: [Object], required: true })
  steps: FlowExecutionStepResult[];

  /** What started it: an agent's POST /execute, or an inbound message. */
  @Prop({ type: String, enum: FLOW_TRIGGER_TYPES, required: true })
  trigger: FlowTriggerType;
}

export const FlowExecutionSchema = SchemaFactory.createForClass(FlowExecution);
FlowExecutionSchema.plugin(tenantScopePlugin);
FlowExecutionSchema.index({ companyId: 1, createdAt: 1 });
