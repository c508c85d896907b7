import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { CONVERSATION_STATUSES, PRIORITIES, type ConversationStatus, type Priority } from '../conversation.schema.js';

/** Conversations page with `startAfter` (the specification's name) instead of `cursor`. */
export class ListConversationsQueryDto extends OmitType(PageQueryDto, ['cursor'] as const) {
  @ApiPropertyOptional({ enum: CONVERSATION_STATUSES })
  @IsOptional()
  @IsIn(CONVERSATION_STATUSES)
  status?: ConversationStatus;

  @ApiPropertyOptional({ example: '6650f0c2a1b2c3d4e5f60718' })
  @IsOptional()
  @IsMongoId()
  assignedAgentId?: string;

  @ApiPropertyOptional({ enum: PRIORITIES })
  @IsOptional()
  @IsIn(PRIORITIES)
  priority?: Priority;

  @ApiPropertyOptional({ description: 'The `nextCursor` of the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  startAfter?: string;
}
