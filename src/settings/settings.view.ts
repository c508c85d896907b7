import type { Stored } from '../database/tenancy/tenant-repository.js';
import { DEFAULT_REPLY_WINDOW_WARNING_MINUTES, type AssignmentStrategy, type Settings, type Weekday } from './settings.schema.js';

export class BusinessHoursWindowView {
  day: Weekday;
  /** @example 09:00 */
  open: string;
  /** @example 17:00 */
  close: string;
}

export class BusinessHoursView {
  enabled: boolean;
  schedule: BusinessHoursWindowView[];
}

export class AutoAssignmentView {
  enabled: boolean;
  strategy: AssignmentStrategy;
  /** @example 5 */
  maxConversationsPerAgent: number;
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
  /** @example "Hi! Thanks for reaching out. How can we help?" */
  welcomeMessage: string;
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
      },
      welcomeMessage: settings.welcomeMessage,
      autoAssignment: {
        enabled: settings.autoAssignment.enabled,
        strategy: settings.autoAssignment.strategy,
        maxConversationsPerAgent: settings.autoAssignment.maxConversationsPerAgent,
      },
      language: settings.language,
      replyWindowWarningMinutes: settings.replyWindowWarningMinutes ?? DEFAULT_REPLY_WINDOW_WARNING_MINUTES,
      createdAt: settings.createdAt.toISOString(),
      updatedAt: settings.updatedAt.toISOString(),
    };
  }
}
