import { getSchemaPath } from '@nestjs/swagger';
import { plainToInstance, Type } from 'class-transformer';
import { IsIn, IsMongoId, IsObject, IsString, Length, ValidateBy, ValidateNested, type ValidationArguments } from 'class-validator';
import { PRIORITIES, type Priority } from '../../conversations/conversation.schema.js';
import { SendTemplateDto } from '../../message-templates/dto/send-template.dto.js';
import { IsTagList } from '../../tags/tag-list.decorator.js';
import { ASSIGNMENT_STRATEGIES, type AssignmentStrategy } from '../../settings/settings.schema.js';
import { FLOW_STEP_TYPES, type FlowStepType } from '../flow.schema.js';
import { customStepDto, customStepTypes, onCustomStepType } from '../steps/flow-step-definition.decorator.js';
import { IsOmittable } from '../../common/dto-decorators.js';

const isKnownStepType = (value: unknown): boolean =>
  typeof value === 'string' && ((FLOW_STEP_TYPES as readonly string[]).includes(value) || customStepDto(value) !== undefined);

/**
 * Any step: only its `type` is known here. An unknown type lands on this class and fails on it. The base of every
 * step class, the built-in ones below and those other modules add with `@FlowStepDefinition`.
 */
export class FlowStepDto {
  @ValidateBy({
    name: 'isFlowStepType',
    validator: {
      validate: isKnownStepType,
      defaultMessage: ({ value }: ValidationArguments) =>
        `unknown step type ${JSON.stringify(value)}; expected one of ${[...FLOW_STEP_TYPES, ...customStepTypes()].join(', ')}`,
    },
  })
  type: string;
}

export class SendMessageStepDto extends FlowStepDto {
  override readonly type = 'send_message' as const;

  /** @example "Thanks! An agent will be with you shortly." */
  @IsString()
  @Length(1, 4096)
  text: string;
}

export class SendTemplateStepDto extends FlowStepDto {
  /** An approved template of the conversation's channel: it goes through also outside the reply window */
  override readonly type = 'send_template' as const;

  /** Checked when the step runs: an unknown or unapproved template, or a wrong number of variables, fails the step */
  @IsObject()
  @ValidateNested()
  @Type(() => SendTemplateDto)
  template: SendTemplateDto;
}

export class AssignStepDto extends FlowStepDto {
  override readonly type = 'assign' as const;

  /**
   * This agent; without it, one is chosen
   * @example 6650f0c2a1b2c3d4e5f60718
   */
  @IsOmittable()
  @IsMongoId()
  agentId?: string;

  /** How to choose without agentId; default: the company's auto-assignment strategy */
  @IsOmittable()
  @IsIn(ASSIGNMENT_STRATEGIES)
  @ValidateBy({
    name: 'notWithAgentId',
    validator: {
      validate: (_value: unknown, args?: ValidationArguments) => (args?.object as AssignStepDto).agentId === undefined,
      defaultMessage: () => 'strategy chooses an agent, so it cannot be combined with agentId',
    },
  })
  strategy?: AssignmentStrategy;
}

export class SetPriorityStepDto extends FlowStepDto {
  override readonly type = 'set_priority' as const;

  @IsIn(PRIORITIES)
  priority: Priority;
}

export class AddTagsStepDto extends FlowStepDto {
  override readonly type = 'add_tags' as const;

  @IsTagList("Added to the conversation's tags, which can hold at most 50 in all (the step fails past that)")
  tags: string[];
}

export class HandoffStepDto extends FlowStepDto {
  /** Moves the conversation to the queue */
  override readonly type = 'handoff' as const;
}

export class CloseStepDto extends FlowStepDto {
  override readonly type = 'close' as const;

  /** @example "Answered by the bot" */
  @IsOmittable()
  @IsString()
  @Length(1, 500)
  reason?: string;
}

const STEP_CLASSES = {
  send_message: SendMessageStepDto,
  send_template: SendTemplateStepDto,
  assign: AssignStepDto,
  set_priority: SetPriorityStepDto,
  add_tags: AddTagsStepDto,
  handoff: HandoffStepDto,
  close: CloseStepDto,
} satisfies Record<FlowStepType, new () => FlowStepDto>;

export const FLOW_STEP_DTOS = Object.values(STEP_CLASSES);

/** OpenAPI: one of the step classes, told apart by `type`; custom step types join it as they are added. */
export const FLOW_STEP_SCHEMA = {
  oneOf: FLOW_STEP_DTOS.map((dto) => ({ $ref: getSchemaPath(dto) })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(Object.entries(STEP_CLASSES).map(([type, dto]) => [type, getSchemaPath(dto)])),
  },
};
onCustomStepType((type, dto) => {
  FLOW_STEP_SCHEMA.oneOf.push({ $ref: getSchemaPath(dto) });
  FLOW_STEP_SCHEMA.discriminator.mapping[type] = getSchemaPath(dto);
});

/**
 * The discriminated union: each plain step becomes the class of its `type` (or FlowStepDto, which
 * refuses the type), so validation applies that step's rules. Non-objects are left for
 * ValidateNested to refuse. Done here rather than with class-transformer's discriminator, which
 * crashes on a null array element.
 */
export function toFlowSteps(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  return value.map((step: unknown) => {
    if (step === null || typeof step !== 'object' || Array.isArray(step)) return step;
    const type = (step as { type?: unknown }).type;
    const builtIn = typeof type === 'string' && Object.hasOwn(STEP_CLASSES, type) ? STEP_CLASSES[type as FlowStepType] : undefined;
    const dto = builtIn ?? (typeof type === 'string' ? customStepDto(type) : undefined) ?? FlowStepDto;
    return plainToInstance(dto, step);
  });
}
