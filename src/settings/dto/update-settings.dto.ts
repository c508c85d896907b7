import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  IsOptional,
  ValidateIf,
  ValidateNested,
} from 'class-validator';

import { WEEKDAYS, type Weekday } from '../../business-hours/business-calendar.js';
import {
  ASSIGNMENT_STRATEGIES,
  MAX_REPLY_WINDOW_WARNING_MINUTES,
  MAX_RETENTION_DAYS,
  MIN_RETENTION_DAYS,
  type AssignmentStrategy,
} from '../settings.schema.js';
import { IsBcp47Language, IsCalendarDateList, IsIanaTimeZone, IsNonOverlappingSchedule, IsAfterTime } from './settings.validators.js';
import { IsOmittable } from '../../common/dto-decorators.js';

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
/** A closing time may also be 24:00, the end of the day. */
const HH_MM_OR_END = /^(([01]\d|2[0-3]):[0-5]\d|24:00)$/;
export const MAX_HOLIDAYS = 400;

export class BusinessHoursWindowDto {
  /** @example monday */
  @IsIn(WEEKDAYS)
  day: Weekday;

  /**
   * HH:MM, 24-hour clock, in the company timezone
   * @example 09:00
   */
  @IsString()
  @Matches(HH_MM, { message: 'open must be a time HH:MM (00:00 to 23:59)' })
  open: string;

  /**
   * HH:MM after open, or 24:00 for the end of the day. A window never crosses midnight: a night shift is one window
   * ending at 24:00 and another from 00:00 the next day, which count as one stretch
   * @example 17:00
   */
  @IsString()
  @Matches(HH_MM_OR_END, { message: 'close must be a time HH:MM (00:01 to 24:00)' })
  @IsAfterTime('open', {
    message: 'close must be later than open: a window cannot cross midnight (end it at 24:00 and open again at 00:00 the next day)',
  })
  close: string;
}

export class BusinessHoursPatchDto {
  @IsOmittable()
  @IsBoolean()
  enabled?: boolean;

  /** Replaces the whole schedule; several windows per day allowed if they do not overlap */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(21)
  @ValidateNested({ each: true })
  @Type(() => BusinessHoursWindowDto)
  @IsNonOverlappingSchedule()
  schedule?: BusinessHoursWindowDto[];

  /**
   * Replaces the whole list: local dates (YYYY-MM-DD) closed all day, whatever the schedule says
   * @example ["2026-12-25", "2027-01-01"]
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_HOLIDAYS)
  @IsCalendarDateList()
  holidays?: string[];
}

export class CsatPatchDto {
  /** Ask the contact for a rating (1 to 5) when a conversation closes */
  @IsOmittable()
  @IsBoolean()
  enabled?: boolean;

  /**
   * What the bot sends on close
   * @example How would you rate our help, from 1 to 5?
   */
  @IsOmittable()
  @IsString()
  @MinLength(1)
  @MaxLength(1000)
  message?: string;
}

export class RetentionPatchDto {
  /** Days after a conversation closes that its messages are erased (metadata kept); null keeps them */
  @IsOptional()
  @ValidateIf((_, value) => value !== null)
  @IsInt()
  @Min(MIN_RETENTION_DAYS)
  @Max(MAX_RETENTION_DAYS)
  closedConversationDays?: number | null;
}

export class AutoAssignmentPatchDto {
  /** Assign conversations entering the queue to an available agent */
  @IsOmittable()
  @IsBoolean()
  enabled?: boolean;

  @IsOmittable()
  @IsIn(ASSIGNMENT_STRATEGIES)
  strategy?: AssignmentStrategy;

  /** Open human conversations per agent */
  @IsOmittable()
  @IsInt()
  @Min(1)
  @Max(1000)
  maxConversationsPerAgent?: number;

  /** Seconds without an authenticated request or an open event stream after which an `online` agent becomes `away`; null: never */
  @IsOptional()
  @IsInt()
  @Min(60)
  @Max(86_400)
  awayAfterIdleSeconds?: number | null;
}

/** Every field optional; nested objects are merged field by field (a schedule is replaced whole). */
export class UpdateSettingsDto {
  /**
   * An IANA time zone name
   * @example Europe/Paris
   */
  @IsOmittable()
  @IsString()
  @IsIanaTimeZone()
  timezone?: string;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => BusinessHoursPatchDto)
  businessHours?: BusinessHoursPatchDto;

  /** Sent by the bot on the contact's first message of a conversation; empty for none */
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  welcomeMessage?: string;

  /** Sent by the bot on a contact's message while business hours are enabled and closed (once per conversation and closed period); empty for none */
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  outOfHoursMessage?: string;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => CsatPatchDto)
  csat?: CsatPatchDto;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => RetentionPatchDto)
  retention?: RetentionPatchDto;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => AutoAssignmentPatchDto)
  autoAssignment?: AutoAssignmentPatchDto;

  /**
   * A BCP 47 language tag (stored in canonical case)
   * @example pt-BR
   */
  @IsOmittable()
  @IsString()
  @IsBcp47Language()
  language?: string;

  /**
   * Minutes before a conversation's reply window closes that `conversation.reply_window_closing` fires, 1 to 1440;
   * applies to windows opened or extended from then on
   * @example 60
   */
  @IsOmittable()
  @IsInt()
  @Min(1)
  @Max(MAX_REPLY_WINDOW_WARNING_MINUTES)
  replyWindowWarningMinutes?: number;
}
