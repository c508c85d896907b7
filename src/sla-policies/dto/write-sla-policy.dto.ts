import { IsString, Length } from 'class-validator';
import { SlaPolicyFieldsDto } from './sla-policy-fields.dto.js';

/** The body of POST: a name, and at least one of the three targets. */
export class CreateSlaPolicyDto extends SlaPolicyFieldsDto {
  /** @example "VIP: answer within 15 minutes" */
  @IsString()
  @Length(1, 200)
  declare name: string;
}

/** The body of PATCH: any field; the policy must keep at least one target, and a warning shorter than each. */
export class UpdateSlaPolicyDto extends SlaPolicyFieldsDto {}
