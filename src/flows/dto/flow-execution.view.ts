import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { FlowExecutionSnapshot, FlowExecutionStepResult } from '../../events/domain-events.js';
import { FLOW_EXECUTION_STATUSES } from '../flow-execution.schema.js';
import { FLOW_STEP_TYPES } from '../flow.schema.js';

export class FlowExecutionStepView implements FlowExecutionStepResult {
  @ApiProperty({ enum: FLOW_STEP_TYPES }) type: string;
  @ApiProperty({ enum: ['completed', 'failed', 'skipped'], description: 'skipped: after a failed step' })
  status: 'completed' | 'failed' | 'skipped';
  @ApiPropertyOptional({ example: 'Cannot move a conversation from closed to queued; allowed from closed: none' })
  error?: string;
}

/** The answer of POST /flows/{id}/execute, also the `flow.executed` event's `execution`. */
export class FlowExecutionView implements FlowExecutionSnapshot {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60730' }) executionId: string;
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718' }) flowId: string;
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60719' }) conversationId: string;
  @ApiProperty({ enum: FLOW_EXECUTION_STATUSES, description: 'failed when a step failed' })
  status: 'completed' | 'failed';
  @ApiProperty({ type: [FlowExecutionStepView] }) steps: FlowExecutionStepView[];
}
