import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Length, ValidateIf } from 'class-validator';
import { PRIORITIES, type Priority } from '../conversation.schema.js';
import { IsTagList } from './conversation-fields.js';

/** Present means set; `null` is refused except for `subject`, where it clears the subject. */
const unlessAbsent = ValidateIf((_: unknown, value: unknown) => value !== undefined);

export class UpdateConversationDto {
  @ApiPropertyOptional({ enum: PRIORITIES })
  @unlessAbsent
  @IsIn(PRIORITIES)
  priority?: Priority;

  @ApiPropertyOptional({ type: [String], example: ['vip', 'billing'], description: 'Replaces the tags' })
  @unlessAbsent
  @IsTagList()
  tags?: string[];

  @ApiPropertyOptional({ type: String, nullable: true, example: 'Order #1042', maxLength: 500 })
  @IsOptional()
  @IsString()
  @Length(1, 500)
  subject?: string | null;

  @ApiPropertyOptional({
    enum: ['queued'],
    description:
      'Only `queued`: hands a bot conversation off to the queue, or unassigns a human one. ' +
      'Assign with POST /conversations/{id}/assign, close with POST /conversations/{id}/close.',
  })
  @unlessAbsent
  @IsIn(['queued'], { message: 'status may only be set to queued here; assign or close through their own routes' })
  status?: 'queued';
}
