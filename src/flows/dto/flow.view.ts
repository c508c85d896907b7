import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../../database/tenancy/tenant-repository.js';
import { FLOW_TRIGGER_TYPES, MAX_FLOW_STEPS, type Flow, type FlowStep, type FlowTriggerType } from '../flow.schema.js';
import { FLOW_STEP_SCHEMA } from './flow-steps.dto.js';

export class FlowTriggerView {
  @ApiProperty({ enum: FLOW_TRIGGER_TYPES }) type: FlowTriggerType;
  @ApiProperty({ type: [String], example: ['pricing'], description: 'Lower-cased; empty: no keyword filter' })
  keywords: string[];
}

export class FlowView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: 'Pricing questions' }) name: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty() isActive: boolean;
  @ApiProperty({ type: FlowTriggerView }) trigger: FlowTriggerView;
  @ApiProperty({ type: 'array', minItems: 1, maxItems: MAX_FLOW_STEPS, items: FLOW_STEP_SCHEMA }) steps: FlowStep[];
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;

  static from(flow: Stored<Flow>): FlowView {
    return {
      id: flow._id.toHexString(),
      name: flow.name,
      description: flow.description ?? null,
      isActive: flow.isActive,
      trigger: { type: flow.trigger.type, keywords: flow.trigger.keywords },
      steps: flow.steps,
      createdAt: flow.createdAt.toISOString(),
      updatedAt: flow.updatedAt.toISOString(),
    };
  }
}

export class DeletedFlowView {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) id: string;
  @ApiProperty({ example: true }) deleted: true;
}
