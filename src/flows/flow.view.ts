import { ApiProperty } from '@nestjs/swagger';
import type { Stored } from '../database/tenancy/tenant-repository.js';
import { MAX_FLOW_STEPS, type Flow, type FlowStep, type FlowTriggerType } from './flow.schema.js';
import { FLOW_STEP_SCHEMA } from './dto/flow-steps.dto.js';

export class FlowTriggerView {
  type: FlowTriggerType;
  /**
   * Lower-cased; empty: no keyword filter
   * @example ["pricing"]
   */
  keywords: string[];
}

export class FlowView {
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example "Pricing questions" */
  name: string;
  description: string | null;
  isActive: boolean;
  trigger: FlowTriggerView;
  @ApiProperty({ items: FLOW_STEP_SCHEMA, minItems: 1, maxItems: MAX_FLOW_STEPS }) steps: FlowStep[];
  createdAt: string;
  updatedAt: string;

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
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  id: string;
  /** @example true */
  deleted: true;
}
