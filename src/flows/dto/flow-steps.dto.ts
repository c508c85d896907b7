import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { IsIn, IsMongoId, IsString, Length, ValidateBy, type ValidationArguments } from 'class-validator';
import { PRIORITIES, type Priority } from '../../conversations/conversation.schema.js';
import { IsTagList } from '../../conversations/dto/conversation-fields.js';
import { ASSIGNMENT_STRATEGIES, type AssignmentStrategy } from '../../settings/settings.schema.js';
import { FLOW_STEP_TYPES, type FlowStepType } from '../flow.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

/** Any step: only its `type` is known here. An unknown type lands on this class and fails on it. */
export class FlowStepDto {
  @ApiProperty({ enum: FLOW_STEP_TYPES })
  @IsIn(FLOW_STEP_TYPES, {
    message: ({ value }: ValidationArguments) =>
      `unknown step type ${JSON.stringify(value)}; expected one of ${FLOW_STEP_TYPES.join(', ')}`,
  })
  type: FlowStepType;
}

export class SendMessageStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['send_message'] }) override readonly type = 'send_message' as const;

  @ApiProperty({ example: 'Thanks! An agent will be with you shortly.', minLength: 1, maxLength: 4096 })
  @IsString()
  @Length(1, 4096)
  text: string;
}

export class AssignStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['assign'] }) override readonly type = 'assign' as const;

  @ApiPropertyOptional({ example: '6650f0c2a1b2c3d4e5f60718', description: 'This agent; without it, one is chosen' })
  @IsOmittable()
  @IsMongoId({ message: 'agentId must be an agent id' })
  agentId?: string;

  @ApiPropertyOptional({
    enum: ASSIGNMENT_STRATEGIES,
    description: "How to choose without agentId; default: the company's auto-assignment strategy",
  })
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
  @ApiProperty({ enum: ['set_priority'] }) override readonly type = 'set_priority' as const;

  @ApiProperty({ enum: PRIORITIES })
  @IsIn(PRIORITIES)
  priority: Priority;
}

export class AddTagsStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['add_tags'] }) override readonly type = 'add_tags' as const;

  @ApiProperty({ type: [String], example: ['sales'], description: "Added to the conversation's tags" })
  @IsTagList()
  tags: string[];
}

export class HandoffStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['handoff'], description: 'Moves the conversation to the queue' })
  override readonly type = 'handoff' as const;
}

export class CloseStepDto extends FlowStepDto {
  @ApiProperty({ enum: ['close'] }) override readonly type = 'close' as const;

  @ApiPropertyOptional({ maxLength: 500, example: 'Answered by the bot' })
  @IsOmittable()
  @IsString()
  @Length(1, 500)
  reason?: string;
}

const STEP_CLASSES = {
  send_message: SendMessageStepDto,
  assign: AssignStepDto,
  set_priority: SetPriorityStepDto,
  add_tags: AddTagsStepDto,
  handoff: HandoffStepDto,
  close: CloseStepDto,
} satisfies Record<FlowStepType, new () => FlowStepDto>;

export const FLOW_STEP_DTOS = Object.values(STEP_CLASSES);

/** OpenAPI: one of the step classes, told apart by `type`. */
export const FLOW_STEP_SCHEMA = {
  oneOf: FLOW_STEP_DTOS.map((dto) => ({ $ref: getSchemaPath(dto) })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(Object.entries(STEP_CLASSES).map(([type, dto]) => [type, getSchemaPath(dto)])),
  },
};

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
    const dto = typeof type === 'string' && Object.hasOwn(STEP_CLASSES, type) ? STEP_CLASSES[type as FlowStepType] : FlowStepDto;
    return plainToInstance(dto, step);
  });
}
