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
  @ApiProperty({ enum: FLOW_TRIGGER_TYPES, description: '`manual`: run through POST /flows/{id}/execute only' })
  @IsIn(FLOW_TRIGGER_TYPES)
  type: FlowTriggerType;

  @ApiPropertyOptional({
    type: [String],
    example: ['pricing', 'opening hours'],
    maxItems: 50,
    description:
      '`inbound_message` only. The flow runs when the message contains one of them as a whole word or ' +
      'phrase, ignoring case ("price" matches "Price?" but not "prices"); without keywords, on every message.',
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(50)
  @IsString({ each: true })
  @Length(1, 100, { each: true })
  keywords?: string[];
}

/** The body of POST and of PUT (a full replacement: what is left out takes its default again). */
export class WriteFlowDto {
  @ApiProperty({ example: 'Pricing questions', minLength: 1, maxLength: 200 })
  @IsString()
  @Length(1, 200)
  name: string;

  @ApiPropertyOptional({ type: String, nullable: true, maxLength: 1000, default: null })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string | null;

  @ApiPropertyOptional({ default: true, description: 'Inactive flows neither run nor trigger' })
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;

  @ApiPropertyOptional({ type: FlowTriggerDto, default: { type: 'manual' } })
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => FlowTriggerDto)
  trigger?: FlowTriggerDto;

  @ApiProperty({
    type: 'array',
    minItems: 1,
    maxItems: MAX_FLOW_STEPS,
    items: FLOW_STEP_SCHEMA,
    description: 'Run in order; the first failing step stops the run',
    example: [
      { type: 'send_message', text: 'Our plans start at $10/month.' },
      { type: 'add_tags', tags: ['sales'] },
      { type: 'handoff' },
    ],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_FLOW_STEPS)
  @Transform(({ value }) => toFlowSteps(value))
  @ValidateNested({ each: true })
  steps: FlowStepDto[];
}
