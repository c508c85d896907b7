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
  ValidateNested,
} from 'class-validator';
import { ASSIGNMENT_STRATEGIES, MAX_REPLY_WINDOW_WARNING_MINUTES, WEEKDAYS, type AssignmentStrategy, type Weekday } from '../settings.schema.js';
import { IsBcp47Language, IsIanaTimeZone, IsNonOverlappingSchedule, IsAfterTime } from './settings.validators.js';
import { IsOmittable } from '../../common/dto-decorators.js';

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;

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
   * HH:MM, after open
   * @example 17:00
   */
  @IsString()
  @Matches(HH_MM, { message: 'close must be a time HH:MM (00:00 to 23:59)' })
  @IsAfterTime('open')
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

  /** Empty for none */
  @IsOmittable()
  @IsString()
  @MaxLength(1000)
  welcomeMessage?: string;

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
