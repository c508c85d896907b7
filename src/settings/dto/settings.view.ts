import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import {
  ASSIGNMENT_STRATEGIES,
  WEEKDAYS,
  type AssignmentStrategy,
  type Settings,
  type Weekday,
} from '../settings.schema.js';

export class BusinessHoursWindowView {
  @ApiProperty({ enum: WEEKDAYS }) day: Weekday;
  @ApiProperty({ example: '09:00' }) open: string;
  @ApiProperty({ example: '17:00' }) close: string;
}

export class BusinessHoursView {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ type: [BusinessHoursWindowView] }) schedule: BusinessHoursWindowView[];
}

export class AutoAssignmentView {
  @ApiProperty() enabled: boolean;
  @ApiProperty({ enum: ASSIGNMENT_STRATEGIES }) strategy: AssignmentStrategy;
  @ApiProperty({ example: 5 }) maxConversationsPerAgent: number;
}

/** The company's settings (one per company). */
export class SettingsView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'UTC', description: 'IANA time zone; analytics buckets and business hours use it' })
  timezone: string;
  @ApiProperty({ type: BusinessHoursView }) businessHours: BusinessHoursView;
  @ApiProperty({ example: 'Hi! Thanks for reaching out. How can we help?' }) welcomeMessage: string;
  @ApiProperty({ type: AutoAssignmentView }) autoAssignment: AutoAssignmentView;
  @ApiProperty({ example: 'en' }) language: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

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
      createdAt: settings.createdAt.toISOString(),
      updatedAt: settings.updatedAt.toISOString(),
    };
  }
}
