import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, ValidateBy, type ValidationArguments } from 'class-validator';
import { parseCalendarDate } from '../../common/calendar-dates.js';
import { GRANULARITIES, type Granularity } from '../calendar.js';

/** Inclusive: a leap year fits, and so does any range ending on the same date a year later. */
export const MAX_RANGE_DAYS = 366;

function calendarDateMessage(args?: ValidationArguments): string {
  const value = args?.value;
  if (value === undefined || value === null || value === '') return `${args?.property} is required, as YYYY-MM-DD`;
  return parseCalendarDate(value) === 'calendar'
    ? `${args?.property} is not a real calendar date: ${String(value)}`
    : `${args?.property} must be a date written YYYY-MM-DD`;
}

const IsCalendarDate = () =>
  ValidateBy({
    name: 'isCalendarDate',
    validator: {
      validate: (value: unknown) => typeof parseCalendarDate(value) === 'number',
      defaultMessage: calendarDateMessage,
    },
  });

/** Days from start to end, both included; null when either date is invalid (reported on its own field). */
function rangeDays(start: unknown, end: unknown): number | null {
  const [first, last] = [parseCalendarDate(start), parseCalendarDate(end)];
  return typeof first === 'number' && typeof last === 'number' ? last - first + 1 : null;
}

const IsRangeEnd = (startProperty: string) =>
  ValidateBy({
    name: 'isRangeEnd',
    validator: {
      validate: (value: unknown, args?: ValidationArguments) => {
        const days = rangeDays((args?.object as Record<string, unknown>)[startProperty], value);
        return days === null || (days >= 1 && days <= MAX_RANGE_DAYS);
      },
      defaultMessage: (args?: ValidationArguments) => {
        const days = rangeDays((args?.object as Record<string, unknown>)[startProperty], args?.value) ?? 0;
        return days < 1
          ? `${args?.property} must not be before ${startProperty}`
          : `the range from ${startProperty} to ${args?.property} must be at most ${MAX_RANGE_DAYS} days (got ${days})`;
      },
    },
  });

/** A range of calendar dates in the company time zone, both ends included. */
export class DateRangeQueryDto {
  /**
   * First day of the range (YYYY-MM-DD), included, in the company time zone
   * @example 2025-03-01
   */
  @ApiProperty({ format: 'date' })
  @IsCalendarDate()
  startDate: string;

  @ApiProperty({
    type: String,
    format: 'date',
    example: '2025-03-31',
    description: `Last day of the range (YYYY-MM-DD), included; on or after startDate, at most ${MAX_RANGE_DAYS} days in all`,
  })
  @IsCalendarDate()
  @IsRangeEnd('startDate')
  endDate: string;
}

export class MetricsQueryDto extends DateRangeQueryDto {
  /** Bucket size: local days, ISO weeks (Monday to Sunday) or calendar months */
  // Optional despite the initializer; the enum is spelled out because ts-jest's metadata cannot name the alias's type.
  @ApiPropertyOptional({ enum: GRANULARITIES, default: 'day' })
  @IsOptional()
  @IsIn(GRANULARITIES)
  granularity: Granularity = 'day';
}
