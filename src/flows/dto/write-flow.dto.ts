import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  ValidateNested,
} from 'class-validator';
import { FLOW_TRIGGER_TYPES, MAX_FLOW_STEPS, type FlowTriggerType } from '../flow.schema.js';
import { FLOW_STEP_SCHEMA, toFlowSteps, type FlowStepDto } from './flow-steps.dto.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export class FlowTriggerDto {
  /** `manual`: run through POST /flows/{id}/execute only */
  @IsIn(FLOW_TRIGGER_TYPES)
  type: FlowTriggerType;

  /**
   * `inbound_message` only. The flow runs when the message contains one of them as a whole word or phrase, ignoring
   * case ("price" matches "Price?" but not "prices"); without keywords, on every message.
   * @example ["pricing","opening hours"]
   */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  keywords?: string[];
}

/** The body of POST and of PUT (a full replacement: what is left out takes its default again). */
export class WriteFlowDto {
  /** @example "Pricing questions" */
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ type: String, default: null })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string | null;

  /** Inactive flows neither run nor trigger */
  @ApiPropertyOptional({ default: true })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ default: { type: 'manual' } })
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => FlowTriggerDto)
  trigger?: FlowTriggerDto;

  /**
   * Run in order; the first failing step stops the run
   * @example [{"type":"send_message","text":"Plans start at 10 euros."},{"type":"add_tags","tags":["sales"]}]
   */
  @ApiProperty({ items: FLOW_STEP_SCHEMA, maxItems: MAX_FLOW_STEPS })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_FLOW_STEPS)
  @Transform(({ value }) => toFlowSteps(value))
  @ValidateNested({ each: true })
  steps: FlowStepDto[];
}
