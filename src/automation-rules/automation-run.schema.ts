import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { SchemaTypes, Types } from 'mongoose';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';
import { EventSource, indexPendingEvents } from '../events/pending-event.schema.js';

export const RUN_RETENTION_MS = 30 * 86_400_000;
export const RUN_OUTCOMES = ['running', 'applied', 'failed', 'loop_stopped'] as const;
export type RunOutcome = (typeof RUN_OUTCOMES)[number];

export interface RunActionResult {
  type: string;
  status: 'ok' | 'failed' | 'skipped';
  error?: string;
}

export interface RunTrigger {
  event?: string;
  eventId?: string;
  timer?: { after: string; since: string };
}

/**
 * One run of a rule on a conversation, recorded before its actions (`running`, unique per rule and trigger) and each
 * action's result as it ends, so that a run interrupted by a crash resumes after its last recorded action. Its end
 * carries `automation.applied`.
 */
@Schema({ collection: 'automation_runs', timestamps: true })
export class AutomationRun extends EventSource {
  @Prop({ type: SchemaTypes.ObjectId, required: true })
  ruleId: Types.ObjectId;

  @Prop({ type: SchemaTypes.ObjectId, required: true })
  conversationId: Types.ObjectId;

  /** `<rule id>:<event id or timer firing id>`: one run per rule and trigger. */
  @Prop({ type: String, required: true })
  triggerKey: string;

  @Prop({ type: Object, required: true })
  trigger: RunTrigger;

  /** The depth of the events its actions cause (1 for a run triggered by an event no rule caused). */
  @Prop({ required: true })
  depth: number;

  @Prop({ type: String, enum: RUN_OUTCOMES, required: true })
  outcome: RunOutcome;

  @Prop({ type: [Object], required: true })
  actions: RunActionResult[];

  /** When the TTL monitor removes it: 30 days after it started. */
  @Prop({ type: Date, required: true })
  expireAt: Date;
}

export const AutomationRunSchema = SchemaFactory.createForClass(AutomationRun);
AutomationRunSchema.plugin(tenantScopePlugin);
indexPendingEvents(AutomationRunSchema);
AutomationRunSchema.index({ companyId: 1, triggerKey: 1 }, { unique: true });
AutomationRunSchema.index({ companyId: 1, ruleId: 1, _id: -1 });
AutomationRunSchema.index({ expireAt: 1 }, { expireAfterSeconds: 0 });
