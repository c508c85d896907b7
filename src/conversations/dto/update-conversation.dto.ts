import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsMongoId, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ATTRIBUTES_SCHEMA, IsContactAttributes, type AttributeValue } from '../../contacts/dto/contact-fields.js';
import { SKILL_PATTERN } from '../../agents/dto/agent-routing-fields.js';
import { IsOmittable } from '../../common/dto-decorators.js';
import { PRIORITIES, type Priority } from '../conversation.schema.js';
import { IsTagList } from '../../tags/tag-list.decorator.js';

/** Present means set; `null` is refused except for `subject`, where it clears the subject. */
export class UpdateConversationDto {
  @IsOmittable()
  @IsIn(PRIORITIES)
  priority?: Priority;

  @IsOmittable()
  @IsTagList('Replaces the tags')
  tags?: string[];

  /** @example "Order #1042" */
  @IsOptional()
  @IsString()
  @Length(1, 500)
  subject?: string | null;

  @ApiPropertyOptional({
    ...ATTRIBUTES_SCHEMA,
    description:
      'Merged into its attributes; null removes a key. Each key must be a conversation attribute your company defines ' +
      '(not archived) and each value of its type (dates as YYYY-MM-DD or ISO-8601): otherwise 400 naming the key',
    example: { order_number: '1042', refund: true },
  })
  @IsOmittable()
  @IsContactAttributes()
  attributes?: Record<string, AttributeValue>;

  /**
   * Only `queued`: hands a bot conversation off to the queue, or unassigns a human one. Assign with POST
   * /conversations/{id}/assign, close with POST /conversations/{id}/close.
   */
  @IsOmittable()
  @IsIn(['queued'], { message: 'status may only be set to queued here; assign or close through their own routes' })
  status?: 'queued';

  /** The team whose queue it goes to; null: the company queue. A change emits `conversation.transferred` */
  @IsOptional()
  @IsMongoId({ message: 'teamId must be a team id or null' })
  teamId?: string | null;

  /** Skills an agent must all hold to be routed it: at most 20 of `[a-z0-9_-]{1,50}` */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(20)
  @IsString({ each: true })
  @Matches(SKILL_PATTERN, { each: true, message: 'each of requiredSkills must match [a-z0-9_-]{1,50}' })
  requiredSkills?: string[];
}
