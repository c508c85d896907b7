import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsMongoId, IsObject, IsOptional, IsString, Length } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { FILTER_SCHEMA_REF } from '../../search/filter-schema.js';
import { MAX_RULE_ACTIONS, RULE_ACTION_TYPES, RULE_EVENTS, TIMER_ANCHORS } from '../automation-rule.schema.js';

const TRIGGER_DOC =
  `\`{ event }\`, one of ${RULE_EVENTS.join(', ')}; or \`{ timer: { after, since } }\`, \`after\` a duration "1m".."90d", ` +
  `\`since\` one of ${TIMER_ANCHORS.join(', ')}`;
const ACTIONS_DOC = `1..${MAX_RULE_ACTIONS} flat objects \`{ type, ... }\`, type one of ${RULE_ACTION_TYPES.join(', ')}; ids and values are checked on save`;

/** The fields every rule body may change (trigger and actions are checked by the service, naming the field). */
export class AutomationRuleOptionsDto {
  @IsOmittable()
  @IsBoolean()
  isActive?: boolean;

  @ApiProperty({
    required: false,
    nullable: true,
    allOf: [{ $ref: FILTER_SCHEMA_REF }],
    description: 'On the conversation, evaluated when the rule fires (docs/filters.md)',
  })
  @IsOptional()
  @IsObject()
  conditions?: Record<string, unknown> | null;

  @IsOmittable()
  @IsBoolean()
  stopOnError?: boolean;
}

export class CreateAutomationRuleDto extends AutomationRuleOptionsDto {
  /** @example "Refunds to Billing" */
  @IsString()
  @Length(1, 100)
  name: string;

  @ApiProperty({ description: TRIGGER_DOC, example: { event: 'message.received' } })
  @IsObject()
  trigger: Record<string, unknown>;

  @ApiProperty({ description: ACTIONS_DOC, type: 'array', items: { type: 'object' }, example: [{ type: 'add_tags', tags: ['refund'] }] })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RULE_ACTIONS)
  @IsObject({ each: true })
  actions: Record<string, unknown>[];
}

export class UpdateAutomationRuleDto extends AutomationRuleOptionsDto {
  @IsOmittable()
  @IsString()
  @Length(1, 100)
  name?: string;

  @ApiProperty({ required: false, description: TRIGGER_DOC, example: { event: 'message.received' } })
  @IsOmittable()
  @IsObject()
  trigger?: Record<string, unknown>;

  @ApiProperty({
    required: false,
    description: ACTIONS_DOC,
    type: 'array',
    items: { type: 'object' },
    example: [{ type: 'add_tags', tags: ['refund'] }],
  })
  @IsOmittable()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_RULE_ACTIONS)
  @IsObject({ each: true })
  actions?: Record<string, unknown>[];
}

export class TestAutomationRuleDto {
  /** @example 6650f0c2a1b2c3d4e5f60720 */
  @IsMongoId()
  conversationId: string;
}
