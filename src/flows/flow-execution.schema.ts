import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import type { FlowExecutionStepResult } from '../events/domain-events.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';
import { FLOW_TRIGGER_TYPES, type FlowTriggerType } from './flow.schema.js';

/** `running` only while a triggered run is under way (a crash leaves it running, for the next attempt to resume). */
export const FLOW_EXECUTION_STATUSES = ['running', 'completed', 'failed'] as const;
export type FlowExecutionStatus = (typeof FLOW_EXECUTION_STATUSES)[number];

/** One run of a flow on a conversation; analytics counts them (flowsExecuted) by createdAt. Its end carries `flow.executed`. */
@Schema({ collection: 'flow_executions', timestamps: true })
export class FlowExecution extends EventSource {
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  flowId: Types.ObjectId;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  conversationId: Types.ObjectId;

  /** The conversation's channel, for its `flow.executed` (channel-scoped webhooks and readers); unset on older runs. */
  @Prop({ type: String })
  channel?: string;

  @Prop({ type: String, enum: FLOW_EXECUTION_STATUSES, required: true })
  status: FlowExecutionStatus;

  @Prop({ type: [Object], required: true })
  steps: FlowExecutionStepResult[];

  /** What started it: an agent's POST /execute, or an inbound message. */
  @Prop({ type: String, enum: FLOW_TRIGGER_TYPES, required: true })
  trigger: FlowTriggerType;

  /**
   * `<flow id>:<event id>` of a run an event triggered, `rule:<run id>:<action index>` of a run a rule's action
   * started: unique, so a flow runs once per triggering event or action.
   */
  @Prop({ type: String })
  triggerKey?: string;

  /** When the TTL monitor removes it (FLOW_EXECUTION_RETENTION_DAYS after it finished); unset while running or kept for ever. */
  @Prop({ type: Date })
  expireAt?: Date;
}

export const FlowExecutionSchema = SchemaFactory.createForClass(FlowExecution);
FlowExecutionSchema.plugin(tenantScopePlugin);
indexPendingEvents(FlowExecutionSchema);
FlowExecutionSchema.index({ companyId: 1, createdAt: 1 });
FlowExecutionSchema.index({ companyId: 1, triggerKey: 1 }, { unique: true, partialFilterExpression: { triggerKey: { $type: 'string' } } });
FlowExecutionSchema.index({ expireAt: 1 }, { expireAfterSeconds: 0, sparse: true });
