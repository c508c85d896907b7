import { OmitType } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { CONVERSATION_STATUSES, PRIORITIES, type ConversationStatus, type Priority } from '../conversation.schema.js';

/** Conversations page with `startAfter` (the specification's name) instead of `cursor`. */
export class ListConversationsQueryDto extends OmitType(PageQueryDto, ['cursor'] as const) {
  @IsOptional()
  @IsIn(CONVERSATION_STATUSES)
  status?: ConversationStatus;

  @IsOptional()
  @IsMongoId()
  assignedAgentId?: string;

  @IsOptional()
  @IsIn(PRIORITIES)
  priority?: Priority;

  /** The `nextCursor` of the previous page */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  startAfter?: string;
}
