import { BadRequestException, ConflictException, HttpException, Injectable, Logger } from '@nestjs/common';
import { Types } from 'mongoose';
import { AutoAssigner } from '../assignment/auto-assigner.js';
import { ConversationsRepository } from '../conversations/conversations.repository.js';
import { ConversationsService } from '../conversations/conversations.service.js';
import { isDuplicateKeyError } from '../database/mongo-errors.js';
import { toObjectId } from '../database/object-id.js';
import type { CompanyId, Stored } from '../database/tenancy/tenant-repository.js';
import type { DomainEvent, FlowExecutionSnapshot, FlowExecutionStepResult } from '../events/domain-events.js';
import { EventLogRepository } from '../events/event-log.repository.js';
import { MessagesRepository } from '../messages/messages.repository.js';
import { MessagesService } from '../messages/messages.service.js';
import { isBuiltInStep, type BuiltInFlowStep, type CustomFlowStep, type Flow, type FlowStep, type FlowTriggerType } from './flow.schema.js';
import { FlowExecutionsRepository, type StoredExecution } from './flow-executions.repository.js';
import { FlowStepHandlers, type FlowStepContext } from './steps/flow-step-handlers.js';

const NO_AGENT_AVAILABLE = 'No agent is available: none is active and online with room under maxConversationsPerAgent';

function errorText(error: unknown): string {
  const response = error instanceof HttpException ? error.getResponse() : undefined;
  const message = typeof response === 'string' ? response : (response as { message?: string | string[] })?.message;
  return Array.isArray(message) ? message.join('; ') : (message ?? 'Internal error');
}

/** The key of a flow's run for a triggering event: one run per flow and event. */
export const triggerKeyOf = (flowId: Types.ObjectId, eventId: string): string => `${flowId.toHexString()}:${eventId}`;

/**
 * What makes a step of a run recognisable when it is run again: the id of the event its change emits, and the
 * key of the message it sends.
 */
interface StepKeys {
  eventId: string;
  dedupeKey: string;
}

const keysOf = (executionId: Types.ObjectId, step: number): StepKeys => ({
  eventId: `evt_${executionId.toHexString()}_${step}`,
  dedupeKey: `flow:${executionId.toHexString()}:${step}`,
});

/**
 * Runs a flow's steps in order on one conversation through the same services the API uses, so the
 * conversation rules, events and permissions are the same as for an agent's requests. The first
 * failing step fails the run and the rest are skipped; every run is stored, with `flow.executed` in the
 * same write. Preconditions (flow active, conversation open) are the caller's.
 *
 * A run triggered by an event is recorded first (`running`, one per flow and event) and records each step
 * as it ends, so that after a crash it resumes at the step that was under way: that step's effect is found by
 * its keys (its event in the log, or the message it sent) rather than applied twice.
 */
@Injectable()
export class FlowRunner {
  private readonly logger = new Logger(FlowRunner.name);

  constructor(
    private readonly conversations: ConversationsService,
    private readonly conversationRecords: ConversationsRepository,
    private readonly messages: MessagesService,
    private readonly messageRecords: MessagesRepository,
    private readonly assigner: AutoAssigner,
    private readonly executions: FlowExecutionsRepository,
    private readonly log: EventLogRepository,
    private readonly handlers: FlowStepHandlers,
  ) {}

  /** A manual run (POST /v1/flows/:id/execute): its answer is the run's result, recorded once it has ended. */
  async run(companyId: CompanyId, flow: Stored<Flow>, conversation: { id: string; channel: string }): Promise<FlowExecutionSnapshot> {
    const conversationId = conversation.id;
    const executionId = new Types.ObjectId();
    const steps: FlowExecutionStepResult[] = [];
    for (const [index, step] of flow.steps.entries()) {
      steps.push(await this.runStep(companyId, flow, conversationId, step, steps, keysOf(executionId, index)));
    }
    const run = { _id: executionId, flowId: flow._id, conversationId: toObjectId(conversationId), channel: conversation.channel, trigger: 'manual' as const, steps };
    return this.executions.recordFinished(companyId, run, statusOf(steps));
  }

  /** The run of `flow` for `event` (inbound flows): once per flow and event, resumed where a crash left it. */
  async runTriggered(companyId: CompanyId, flow: Stored<Flow>, conversationId: string, event: DomainEvent): Promise<void> {
    const conversation = { id: conversationId, channel: event.channel ?? undefined };
    await this.runOnce(companyId, flow, conversation, triggerKeyOf(flow._id, event.id), 'inbound_message');
  }

  /**
   * The run of `flow` under `triggerKey` (an event, or a rule's action in its run): once per key, resumed where a
   * crash left it, so that the caller may ask again after a crash without the flow running twice.
   */
  async runOnce(
    companyId: CompanyId,
    flow: Stored<Flow>,
    conversation: { id: string; channel?: string },
    triggerKey: string,
    trigger: FlowTriggerType,
  ): Promise<void> {
    const claim = { flowId: flow._id, conversationId: toObjectId(conversation.id), channel: conversation.channel, triggerKey, trigger };
    const { execution, resumed } = await this.executions.claimTriggered(companyId, claim);
    await this.resume(companyId, flow, execution, resumed);
  }

  /** Carries a `running` execution to its end; `uncertain`: its next step may have been applied by a run that died. */
  async resume(companyId: CompanyId, flow: Stored<Flow>, execution: StoredExecution, uncertain: boolean): Promise<void> {
    if (execution.status !== 'running') return;
    const conversationId = execution.conversationId.toHexString();
    const steps = [...execution.steps];
    for (let index = steps.length; index < flow.steps.length; index += 1) {
      const keys = keysOf(execution._id, index);
      const step = flow.steps[index];
      const result =
        uncertain && index === execution.steps.length && (await this.wasApplied(companyId, flow._id.toHexString(), conversationId, step, keys))
          ? { type: step.type, status: 'completed' as const }
          : await this.runStep(companyId, flow, conversationId, step, steps, keys);
      steps.push(result);
      await this.executions.recordStep(companyId, execution._id, result);
    }
    await this.executions.finish(companyId, execution, steps, statusOf(steps));
  }

  private async runStep(
    companyId: CompanyId,
    flow: Stored<Flow>,
    conversationId: string,
    step: FlowStep,
    before: FlowExecutionStepResult[],
    keys: StepKeys,
  ): Promise<FlowExecutionStepResult> {
    if (before.some((result) => result.status !== 'completed')) return { type: step.type, status: 'skipped' };
    try {
      await this.perform(companyId, flow._id.toHexString(), conversationId, step, keys);
      return { type: step.type, status: 'completed' };
    } catch (error) {
      if (!(error instanceof HttpException)) {
        this.logger.error(`Flow ${flow._id.toHexString()} step ${step.type} failed: ${(error as Error).stack}`);
      }
      return { type: step.type, status: 'failed', error: errorText(error) };
    }
  }

  private async perform(companyId: CompanyId, flowId: string, conversationId: string, step: FlowStep, keys: StepKeys): Promise<void> {
    if (!isBuiltInStep(step)) return this.customHandler(step).perform(this.contextOf(companyId, flowId, conversationId, keys), step);
    await this.performBuiltIn(companyId, flowId, conversationId, step, keys);
  }

  private async performBuiltIn(companyId: CompanyId, flowId: string, conversationId: string, step: BuiltInFlowStep, keys: StepKeys): Promise<void> {
    const actor = { kind: 'flow', id: flowId } as const;
    const eventOptions = { eventId: keys.eventId };
    switch (step.type) {
      case 'send_message':
        try {
          await this.messages.sendText(companyId, conversationId, step.text, { type: 'bot', id: flowId }, { ...eventOptions, dedupeKey: keys.dedupeKey });
        } catch (error) {
          // Sent already by the run that died: the message is there, once.
          if (!isDuplicateKeyError(error)) throw error;
        }
        return;
      case 'send_template':
        try {
          await this.messages.sendTemplate(companyId, conversationId, step.template, { type: 'bot', id: flowId }, { ...eventOptions, dedupeKey: keys.dedupeKey });
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
        }
        return;
      case 'assign':
        if (step.agentId) {
          await this.conversations.assign(companyId, conversationId, step.agentId, actor, eventOptions);
        } else if (!(await this.assigner.assignNext(companyId, conversationId, step.strategy, actor, eventOptions))) {
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
        await this.conversations.handOff(companyId, conversationId, eventOptions);
        return;
      case 'close':
        await this.conversations.close(companyId, conversationId, step.reason, eventOptions);
        return;
    }
  }

  /**
   * Whether a step of a run that died was applied: a message step by the message it sent, a conversation step by
   * its event (still pending on the conversation, or in the log). Priority and tags are the same when set again.
   */
  private async wasApplied(companyId: CompanyId, flowId: string, conversationId: string, step: FlowStep, keys: StepKeys): Promise<boolean> {
    if (!isBuiltInStep(step)) {
      const handler = this.customHandler(step);
      return (await handler.wasApplied?.(this.contextOf(companyId, flowId, conversationId, keys), step)) ?? false;
    }
    switch (step.type) {
      case 'send_message':
      case 'send_template':
        return this.messageRecords.existsWithDedupeKey(companyId, keys.dedupeKey);
      case 'assign':
      case 'handoff':
      case 'close':
        return (
          (await this.conversationRecords.hasPendingEvent(companyId, conversationId, keys.eventId)) ||
          (await this.log.exists(companyId, keys.eventId))
        );
      case 'set_priority':
      case 'add_tags':
        return false;
    }
  }

  private customHandler(step: CustomFlowStep) {
    const handler = this.handlers.get(step.type);
    if (!handler) throw new BadRequestException(`No handler runs flow steps of type ${step.type}`);
    return handler;
  }

  private contextOf(companyId: CompanyId, flowId: string, conversationId: string, keys: StepKeys): FlowStepContext {
    return { companyId: String(companyId), flowId, conversationId, stepKey: keys.dedupeKey };
  }
}

function statusOf(steps: FlowExecutionStepResult[]): 'completed' | 'failed' {
  return steps.some((step) => step.status === 'failed') ? 'failed' : 'completed';
}
