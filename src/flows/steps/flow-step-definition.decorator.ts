import { FLOW_STEP_TYPES } from '../flow.schema.js';

/** A class validating the fields of one step type (it extends FlowStepDto). */
export type FlowStepDtoClass = new () => { type: string };

const customSteps = new Map<string, FlowStepDtoClass>();
const listeners: ((type: string, dto: FlowStepDtoClass) => void)[] = [];

/**
 * Adds a flow step type: the decorated class (extending FlowStepDto, with class-validator rules on its fields)
 * validates steps of `type` when a flow is written, and documents them in OpenAPI. A provider marked
 * `@HandlesFlowStep(type)` runs them. Applied when the class is loaded, before the app starts.
 */
export function FlowStepDefinition(type: string): ClassDecorator {
  return (target) => {
    if ((FLOW_STEP_TYPES as readonly string[]).includes(type) || customSteps.has(type)) {
      throw new Error(`Flow step type ${type} already exists`);
    }
    const dto = target as unknown as FlowStepDtoClass;
    customSteps.set(type, dto);
    for (const listener of listeners) listener(type, dto);
  };
}

export function customStepDto(type: string): FlowStepDtoClass | undefined {
  return customSteps.get(type);
}

export function customStepTypes(): string[] {
  return [...customSteps.keys()];
}

export function customStepDtos(): FlowStepDtoClass[] {
  return [...customSteps.values()];
}

/** Calls `listener` for every custom step type, now and as they are added (the OpenAPI step schema follows them). */
export function onCustomStepType(listener: (type: string, dto: FlowStepDtoClass) => void): void {
  for (const [type, dto] of customSteps) listener(type, dto);
  listeners.push(listener);
}
