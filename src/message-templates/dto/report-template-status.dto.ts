import { IsIn, IsString, Length, ValidateBy, type ValidationArguments } from 'class-validator';
import { TEMPLATE_STATUSES, type TemplateStatus } from '../message-template.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

const IsOnlyWithRejected = () =>
  ValidateBy({
    name: 'isOnlyWithRejected',
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => (args?.object as ReportTemplateStatusDto).status === 'rejected',
      defaultMessage: (args?: ValidationArguments) => `${args?.property} is allowed only with status rejected`,
    },
  });

/** The channel's verdict on a template, as the channel connector reports it. */
export class ReportTemplateStatusDto {
  /** @example approved */
  @IsIn(TEMPLATE_STATUSES)
  status: TemplateStatus;

  /**
   * Why the channel rejected it; only with status `rejected`
   * @example "INVALID_FORMAT: variables must not be at the start or end"
   */
  @IsOmittable()
  @IsString()
  @Length(1, 1000)
  @IsOnlyWithRejected()
  rejectionReason?: string;
}
