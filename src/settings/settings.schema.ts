import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { writeGenerationOf } from '../database/caching/write-generation.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

export const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof WEEKDAYS)[number];
export const ASSIGNMENT_STRATEGIES = ['round_robin', 'least_busy'] as const;
export type AssignmentStrategy = (typeof ASSIGNMENT_STRATEGIES)[number];

export interface BusinessHoursWindow {
  day: Weekday;
  /** "HH:MM", 24-hour clock, in the company's timezone. */
  open: string;
  close: string;
}

export interface BusinessHours {
  enabled: boolean;
  schedule: BusinessHoursWindow[];
}

export interface AutoAssignment {
  enabled: boolean;
  strategy: AssignmentStrategy;
  maxConversationsPerAgent: number;
}

/** How long before a conversation's reply window closes `conversation.reply_window_closing` fires (contract section 17). */
export const DEFAULT_REPLY_WINDOW_WARNING_MINUTES = 60;
export const MAX_REPLY_WINDOW_WARNING_MINUTES = 1440;

export const DEFAULT_BUSINESS_HOURS: BusinessHours = {
  enabled: false,
  schedule: WEEKDAYS.slice(0, 5).map((day) => ({ day, open: '09:00', close: '17:00' })),
};

/** One per company, created with it (contract section 5). */
@Schema({ collection: 'settings', timestamps: true, minimize: false })
export class Settings {
  @Prop({ required: true, default: 'UTC' })
  timezone: string;

  @Prop({ type: Object, default: () => structuredClone(DEFAULT_BUSINESS_HOURS) })
  businessHours: BusinessHours;

  @Prop({ default: 'Hi! Thanks for reaching out. How can we help?' })
  welcomeMessage: string;

  @Prop({ type: Object, default: () => ({ enabled: false, strategy: 'round_robin', maxConversationsPerAgent: 5 }) })
  autoAssignment: AutoAssignment;

  @Prop({ default: 'en' })
  language: string;

  /** Minutes before a reply window closes that `conversation.reply_window_closing` fires; unset on older records. */
  @Prop({ default: DEFAULT_REPLY_WINDOW_WARNING_MINUTES, min: 1, max: MAX_REPLY_WINDOW_WARNING_MINUTES })
  replyWindowWarningMinutes?: number;
}

export const SettingsSchema = SchemaFactory.createForClass(Settings);
SettingsSchema.plugin(tenantScopePlugin);
/** Bumped by every write to settings in this process: SettingsRepository's cache follows it. */
export const SETTINGS_WRITES = writeGenerationOf(SettingsSchema);
SettingsSchema.index({ companyId: 1 }, { unique: true });
