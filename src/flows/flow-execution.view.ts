import type { FlowExecutionSnapshot, FlowExecutionStepResult } from '../events/domain-events.js';

export class FlowExecutionStepView implements FlowExecutionStepResult {
  type: string;
  /** skipped: after a failed step */
  status: 'completed' | 'failed' | 'skipped';
  /** @example "Cannot move a conversation from closed to queued; allowed from closed: none" */
  error?: string;
}

/** The answer of POST /flows/{id}/execute, also the `flow.executed` event's `execution`. */
export class FlowExecutionView implements FlowExecutionSnapshot {
  /** @example 6650f0c2a1b2c3d4e5f60730 */
  executionId: string;
  /** @example 6650f0c2a1b2c3d4e5f60718 */
  flowId: string;
  /** @example 6650f0c2a1b2c3d4e5f60719 */
  conversationId: string;
  /** failed when a step failed */
  status: 'completed' | 'failed';
  steps: FlowExecutionStepView[];
}
