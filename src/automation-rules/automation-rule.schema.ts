import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { auditedPlugin } from '../audit/audited.js';
import { removablePlugin } from '../database/tenancy/removable.plugin.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

export const MAX_RULES_PER_COMPANY = 200;
export const MAX_RULE_ACTIONS = 20;

/** The events a rule may be triggered by (contract section 21). */
export const RULE_EVENTS = [
  'conversation.created',
  'message.received',
  'message.sent',
  'conversation.queued',
  'conversation.assigned',
  'conversation.closed',
  'conversation.updated',
  'conversation.priority_changed',
  'conversation.note_added',
  'sla.warning',
  'sla.breached',
  'csat.submitted',
] as const;
export type RuleEvent = (typeof RULE_EVENTS)[number];

/** What a time trigger counts from. */
export const TIMER_ANCHORS = ['created', 'last_message', 'last_contact_message', 'last_agent_message', 'status'] as const;
export type TimerAnchor = (typeof TIMER_ANCHORS)[number];

export const RULE_ACTION_TYPES = [
  'assign_team',
  'assign_agent',
  'handoff',
  'set_priority',
  'add_tags',
  'remove_tags',
  'set_attribute',
  'send_message',
  'add_note',
  'snooze',
  'close',
  'run_flow',
] as const;
export type RuleActionType = (typeof RULE_ACTION_TYPES)[number];

export interface RuleTrigger {
  event?: RuleEvent;
  timer?: { after: string; since: TimerAnchor };
}

/** A flat action as checked on save (`{ type: 'add_tags', tags: ['vip'] }`). */
export type RuleAction = { type: RuleActionType } & Record<string, unknown>;

/** An automation rule (contract section 21). `version` moves on every edit: timers of an older version do nothing. */
@Schema({ collection: 'automation_rules', timestamps: true, minimize: false })
export class AutomationRule {
  @Prop({ required: true, trim: true, maxlength: 100 })
  name: string;

  @Prop({ required: true, default: true })
  isActive: boolean;

  @Prop({ type: Object, required: true })
  trigger: RuleTrigger;

  /** The filter as given (section 20); parsed again against the definitions when the rule fires. */
  @Prop({ type: Object, default: null })
  conditions: Record<string, unknown> | null;

  @Prop({ type: [Object], required: true })
  actions: RuleAction[];

  @Prop({ required: true, default: false })
  stopOnError: boolean;

  @Prop({ required: true, default: 1 })
  version: number;
}

export const AutomationRuleSchema = SchemaFactory.createForClass(AutomationRule);
AutomationRuleSchema.plugin(tenantScopePlugin);
AutomationRuleSchema.plugin(auditedPlugin);
AutomationRuleSchema.plugin(removablePlugin);
AutomationRuleSchema.index({ companyId: 1, _id: -1 });
// The cache's cheap check: the company's latest change (AutomationRuleCache), and its active rules.
AutomationRuleSchema.index({ companyId: 1, updatedAt: -1 });
AutomationRuleSchema.index({ companyId: 1, isActive: 1 });
