import { Injectable, SetMetadata, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';

export const HANDLES_FLOW_STEP = Symbol('parley:handles-flow-step');

/** Where a step runs, and what makes this run's step recognisable when it is run again. */
export interface FlowStepContext {
  companyId: string;
  flowId: string;
  conversationId: string;
  /**
   * The same for this step of this run, however often it is run: a run stopped by a crash is resumed and may
   * repeat the step that was under way, so key the step's effect by it (e.g. a unique index).
   */
  stepKey: string;
}

/** Runs the steps of a custom type (see FlowStepDefinition). Throwing fails the step (and the rest are skipped). */
export interface FlowStepHandler<Step extends { type: string } = { type: string }> {
  perform(context: FlowStepContext, step: Step): Promise<void>;
  /**
   * After a crash: whether the step's effect was already applied (keyed by `context.stepKey`). Without it the
   * step is performed again, so `perform` must then be idempotent on `stepKey`.
   */
  wasApplied?(context: FlowStepContext, step: Step): Promise<boolean>;
}

/** Makes a provider the runner of the custom flow step `type`. */
export const HandlesFlowStep = (type: string): ClassDecorator => SetMetadata(HANDLES_FLOW_STEP, type);

/** The providers marked `@HandlesFlowStep`, found when the app starts. */
@Injectable()
export class FlowStepHandlers implements OnModuleInit {
  private readonly handlers = new Map<string, FlowStepHandler>();

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const type = wrapper.metatype && (Reflect.getMetadata(HANDLES_FLOW_STEP, wrapper.metatype) as string | undefined);
      if (!type || !wrapper.instance) continue;
      if (this.handlers.has(type)) throw new Error(`Flow step type ${type} has two handlers`);
      this.handlers.set(type, wrapper.instance as FlowStepHandler);
    }
  }

  get(type: string): FlowStepHandler | undefined {
    return this.handlers.get(type);
  }
}
