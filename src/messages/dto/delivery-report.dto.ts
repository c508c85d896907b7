import { Type } from 'class-transformer';
import { IsIn, IsObject, IsString, Length, ValidateBy, ValidateNested, type ValidationArguments } from 'class-validator';
import { REPORTED_STATUSES, type ReportedStatus } from '../delivery-status.js';
import { IsTimestamp, parseTimestamp } from '../timestamp.js';
import { IsOmittable } from '../../common/dto-decorators.js';

/** How far ahead of this server's clock a channel's `occurredAt` may be (clock skew); further is refused. */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;

const IsNotFarFuture = () =>
  ValidateBy({
    name: 'isNotFarFuture',
    validator: {
      // An unreadable time is IsTimestamp's to report.
      validate: (value: unknown) => typeof value !== 'string' || (parseTimestamp(value)?.getTime() ?? 0) <= Date.now() + MAX_CLOCK_SKEW_MS,
      defaultMessage: (args?: ValidationArguments) => `${args?.property} must not be in the future`,
    },
  });

const IsOnlyWithFailed = () =>
  ValidateBy({
    name: 'isOnlyWithFailed',
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => (args?.object as DeliveryReportDto).status === 'failed',
      defaultMessage: (args?: ValidationArguments) => `${args?.property} is allowed only with status failed`,
    },
  });

export class DeliveryReportErrorDto {
  /**
   * The channel's error code
   * @example 131026
   */
  @IsString()
  @Length(1, 100)
  code: string;

  /** @example "Message undeliverable" */
  @IsString()
  @Length(1, 1000)
  message: string;
}

/** A channel connector's report on an outbound message (contract section 12). */
export class DeliveryReportDto {
  /** @example delivered */
  @IsIn(REPORTED_STATUSES)
  status: ReportedStatus;

  /**
   * The channel's own id of the message; kept on `delivery.externalId` when the report moves it
   * @example wamid.HBgLMTQxNTU1NTI2NzEVAgARGBI
   */
  @IsOmittable()
  @IsString()
  @Length(1, 255)
  externalId?: string;

  /**
   * When the channel says it happened (ISO-8601 with a zone, or epoch milliseconds); default: when the report
   * arrives. Kept in order: never before the status it follows, nor after now; more than 5 minutes ahead → 400
   * @example 2025-03-01T10:00:05Z
   */
  @IsOmittable()
  @IsTimestamp()
  @IsNotFarFuture()
  occurredAt?: string;

  /** Why it failed; only with status `failed` */
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => DeliveryReportErrorDto)
  @IsOnlyWithFailed()
  error?: DeliveryReportErrorDto;
}
