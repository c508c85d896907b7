import { Prop, Schema, SchemaFactory } from '@nestjs/mongoose';
import { WEEKDAYS, type BusinessHoursRules } from '../business-hours/business-calendar.js';
import { writeGenerationOf } from '../database/caching/write-generation.js';
import { tenantScopePlugin } from '../database/tenancy/tenant-scope.plugin.js';

export const ASSIGNMENT_STRATEGIES = ['round_robin', 'least_busy'] as const;
export type AssignmentStrategy = (typeof ASSIGNMENT_STRATEGIES)[number];

/** Windows "HH:MM" to "HH:MM" (24:00 ends the day) per weekday, and holidays, in the company's timezone (business-calendar.ts). */
export type BusinessHours = BusinessHoursRules;

export interface AutoAssignment {
  enabled: boolean;
  strategy: AssignmentStrategy;
  maxConversationsPerAgent: number;
  /** An `online` agent idle this long (no authenticated request, no open event stream) becomes `away`; null: never. */
  awayAfterIdleSeconds?: number | null;
}

/** Customer satisfaction surveys (contract section 16): the bot asks `message` when a conversation closes. */
export interface CsatSettings {
  enabled: boolean;
  message: string;
}
/** How long before a conversation's reply window closes `conversation.reply_window_closing` fires (contract section 17). */
export const DEFAULT_REPLY_WINDOW_WARNING_MINUTES = 60;
export const MAX_REPLY_WINDOW_WARNING_MINUTES = 1440;

export const DEFAULT_BUSINESS_HOURS: BusinessHours = {
  enabled: false,
  schedule: WEEKDAYS.slice(0, 5).map((day) => ({ day, open: '09:00', close: '17:00' })),
  holidays: [],
};

export const DEFAULT_CSAT: CsatSettings = { enabled: false, message: 'How would you rate our help, from 1 to 5?' };

/** One per company, created with it (contract section 5). */
@Schema({ collection: 'settings', timestamps: true, minimize: false })
export class Settings {
  @Prop({ required: true, default: 'UTC' })
  timezone: string;

  @Prop({ type: Object, default: () => structuredClone(DEFAULT_BUSINESS_HOURS) })
  businessHours: BusinessHours;

  /** The bot's first answer to a conversation a contact starts; empty for none (the default: nothing a company did not choose). */
  @Prop({ default: '' })
  welcomeMessage: string;

  /** The bot's answer to a contact who writes while business hours are enabled and closed; empty for none. */
  @Prop({ default: '' })
  outOfHoursMessage: string;

  @Prop({ type: Object, default: () => ({ ...DEFAULT_CSAT }) })
  csat: CsatSettings;

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
