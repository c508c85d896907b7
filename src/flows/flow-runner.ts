import { ConflictException, HttpException, Injectable, Logger } from '@nestjs/common';
import { AutoAssigner } from '../assignment/auto-assigner.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import { DomainEventBus } from '../events/domain-event-bus.js';
import type { FlowExecutionSnapshot, FlowExecutionStepResult } from '../events/domain-events.js';
import { MessagesService } from '../messages/messages.service.js';
import type { Flow, FlowStep, FlowTriggerType } from './flow.schema.js';
import { FlowExecutionsRepository } from './flow-executions.repository.js';

const NO_AGENT_AVAILABLE = 'No agent is available: none is active and online with room under maxConversationsPerAgent';

function errorText(error: unknown): string {
  const response = error instanceof HttpException ? error.getResponse() : undefined;
  const message = typeof response === 'string' ? response : (response as { message?: string | string[] })?.message;
  return Array.isArray(message) ? message.join('; ') : (message ?? 'Internal error');
}

/**
 * Runs a flow's steps in order on one conversation through the same services the API uses, so the
 * conversation rules, events and permissions are the same as for an agent's requests. The first
 * failing step fails the run and the rest are skipped; every run is stored and published as
 * `flow.executed`. Preconditions (flow active, conversation open) are the caller's.
 */
@Injectable()
export class FlowRunner {
  private readonly logger = new Logger(FlowRunner.name);

  constructor(
    private readonly conversations: ConversationsService,
    private readonly messages: MessagesService,
    private readonly assigner: AutoAssigner,
    private readonly executions: FlowExecutionsRepository,
    private readonly events: DomainEventBus,
  ) {}

  async run(
    companyId: CompanyId,
    flow: Stored<Flow>,
    conversationId: string,
    trigger: FlowTriggerType,
  ): Promise<FlowExecutionSnapshot> {
    const steps = await this.runSteps(companyId, flow, conversationId);
    const status = steps.some((step) => step.status === 'failed') ? 'failed' : 'completed';
    const stored = await this.executions.create(companyId, {
      flowId: flow._id,
      conversationId: toObjectId(conversationId),
      status,
      steps,
      trigger,
    });
    const execution: FlowExecutionSnapshot = {
      executionId: stored._id.toHexString(),
      flowId: flow._id.toHexString(),
      conversationId,
      status,
      steps,
    };
    await this.events.publish('flow.executed', String(companyId), { execution });
    return execution;
  }

  private async runSteps(companyId: CompanyId, flow: Stored<Flow>, conversationId: string): Promise<FlowExecutionStepResult[]> {
    const results: FlowExecutionStepResult[] = [];
    let failed = false;
    for (const step of flow.steps) {
      if (failed) {
        results.push({ type: step.type, status: 'skipped' });
        continue;
      }
      try {
        await this.perform(companyId, flow._id.toHexString(), conversationId, step);
        results.push({ type: step.type, status: 'completed' });
      } catch (error) {
        if (!(error instanceof HttpException)) {
          this.logger.error(`Flow ${flow._id.toHexString()} step ${step.type} failed: ${(error as Error).stack}`);
        }
        failed = true;
        results.push({ type: step.type, status: 'failed', error: errorText(error) });
      }
    }
    return results;
  }

  private async perform(companyId: CompanyId, flowId: string, conversationId: string, step: FlowStep): Promise<void> {
    const actor = { kind: 'flow', id: flowId } as const;
    switch (step.type) {
      case 'send_message':
        await this.messages.sendText(companyId, conversationId, step.text, { type: 'bot', id: flowId });
        return;
      case 'assign':
        if (step.agentId) {
          await this.conversations.assign(companyId, conversationId, step.agentId, actor);
        } else if (!(await this.assigner.assignNext(companyId, conversationId, step.strategy, actor))) {
          throw new ConflictException(NO_AGENT_AVAILABLE);
        }
        return;
      case 'set_priority':
        await this.conversations.setPriority(companyId, conversationId, step.priority);
        return;
      case 'add_tags':
        await this.conversations.addTags(companyId, conversationId, step.tags);
        return;
      case 'handoff':
        await this.conversations.handOff(companyId, conversationId);
        return;
      case 'close':
        await this.conversations.close(companyId, conversationId, step.reason);
        return;
    }
  }
}
