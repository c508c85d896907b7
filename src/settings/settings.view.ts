import type { Stored } from '../database/tenancy/tenant-repository.js';
import type { Weekday } from '../business-hours/business-calendar.js';
import { DEFAULT_CSAT, DEFAULT_REPLY_WINDOW_WARNING_MINUTES, type AssignmentStrategy, type Settings } from './settings.schema.js';

export class BusinessHoursWindowView {
  day: Weekday;
  /** @example 09:00 */
  open: string;
  /**
   * 24:00 is the end of the day
   * @example 17:00
   */
  close: string;
}

export class BusinessHoursView {
  /** false: always open (no out-of-hours replies; every second counts for SLA policies) */
  enabled: boolean;
  schedule: BusinessHoursWindowView[];
  /**
   * Local dates closed all day, ascending
   * @example ["2026-12-25"]
   */
  holidays: string[];
}

export class CsatSettingsView {
  /** Ask for a rating when a conversation closes */
  enabled: boolean;
  /** @example How would you rate our help, from 1 to 5? */
  message: string;
}

export class AutoAssignmentView {
  enabled: boolean;
  strategy: AssignmentStrategy;
  /** @example 5 */
  maxConversationsPerAgent: number;
  /** An `online` agent idle this long becomes `away`; null: never */
  awayAfterIdleSeconds: number | null;
}

/** The company's settings (one per company). */
export class SettingsView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /**
   * IANA time zone; analytics buckets and business hours use it
   * @example UTC
   */
  timezone: string;
  businessHours: BusinessHoursView;
  /**
   * Sent by the bot on the contact's first message of a conversation; empty for none
   * @example "Hi! Thanks for reaching out. How can we help?"
   */
  welcomeMessage: string;
  /**
   * Sent by the bot on a contact's message while business hours are enabled and closed, once per conversation and
   * closed period; empty for none
   * @example "We are closed now and will answer from 9:00."
   */
  outOfHoursMessage: string;
  csat: CsatSettingsView;
  autoAssignment: AutoAssignmentView;
  /** @example en */
  language: string;
  /**
   * Minutes before a conversation's reply window closes that `conversation.reply_window_closing` fires
   * @example 60
   */
  replyWindowWarningMinutes: number;
  createdAt: string;
  updatedAt: string;

  static from(settings: Stored<Settings>): SettingsView {
    return {
      id: settings._id.toHexString(),
      timezone: settings.timezone,
      businessHours: {
        enabled: settings.businessHours.enabled,
        schedule: settings.businessHours.schedule.map(({ day, open, close }) => ({ day, open, close })),
        holidays: [...(settings.businessHours.holidays ?? [])],
      },
      welcomeMessage: settings.welcomeMessage,
      outOfHoursMessage: settings.outOfHoursMessage ?? '',
      csat: { ...DEFAULT_CSAT, ...settings.csat },
      autoAssignment: {
        enabled: settings.autoAssignment.enabled,
        strategy: settings.autoAssignment.strategy,
        maxConversationsPerAgent: settings.autoAssignment.maxConversationsPerAgent,
        awayAfterIdleSeconds: settings.autoAssignment.awayAfterIdleSeconds ?? null,
      },
      language: settings.language,
      replyWindowWarningMinutes: settings.replyWindowWarningMinutes ?? DEFAULT_REPLY_WINDOW_WARNING_MINUTES,
      createdAt: settings.createdAt.toISOString(),
      updatedAt: settings.updatedAt.toISOString(),
    };
  }
}
