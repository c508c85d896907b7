import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { PRIORITIES, type Priority } from '../../conversations/conversation.schema.js';
import { CHANNEL_KEY_PATTERN, LowerCasedChannels } from '../../conversations/dto/conversation-fields.js';

/** Targets (and the warning) are whole seconds from 1 to a year; null or left out: none. */
export const MAX_TARGET_SECONDS = 366 * 86_400;

export class SlaConditionsDto {
  /**
   * Match conversations of these priorities; empty or left out: any
   * @example ["high"]
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(PRIORITIES.length)
  @IsIn(PRIORITIES, { each: true })
  priorities?: Priority[];

  /**
   * Match conversations on these channels (case-insensitive); empty or left out: any
   * @example ["whatsapp"]
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(50)
  @LowerCasedChannels()
  @IsString({ each: true })
  @Matches(CHANNEL_KEY_PATTERN, { each: true, message: 'each channel in conditions.channels must be 1 to 64 of a-z, 0-9, _ . : + -' })
  channels?: string[];
}

/** The fields of a policy, all optional: POST requires `name` and one target (checked by the service), PATCH none. */
export class SlaPolicyFieldsDto {
  /** @example "VIP: answer within 15 minutes" */
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  name?: string;

  /** Inactive policies match no conversation */
  @ApiPropertyOptional({ default: true })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ default: { priorities: [], channels: [] } })
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => SlaConditionsDto)
  conditions?: SlaConditionsDto;

  /** From opening to the first agent message; null or left out: no target */
  @ApiPropertyOptional({ type: 'integer', nullable: true, maximum: MAX_TARGET_SECONDS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TARGET_SECONDS)
  firstResponseSeconds?: number | null;

  /** From each contact message following an agent answer to the next agent answer; null or left out: no target */
  @ApiPropertyOptional({ type: 'integer', nullable: true, maximum: MAX_TARGET_SECONDS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TARGET_SECONDS)
  nextResponseSeconds?: number | null;

  /** From opening to close; null or left out: no target */
  @ApiPropertyOptional({ type: 'integer', nullable: true, maximum: MAX_TARGET_SECONDS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TARGET_SECONDS)
  resolutionSeconds?: number | null;

  /** Count only open business hours (settings) towards the targets */
  @ApiPropertyOptional({ default: false })
  @IsOmittable()
  @IsBoolean()
  businessHoursOnly?: boolean;

  /** Fire `sla.warning` this long before a target falls due: shorter than every target; null or left out: no warning */
  @ApiPropertyOptional({ type: 'integer', nullable: true, maximum: MAX_TARGET_SECONDS })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_TARGET_SECONDS)
  warnBeforeSeconds?: number | null;
}
