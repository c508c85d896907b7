import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsObject, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../../common/pagination/page-query.dto.js';
import { CONTACT_SORTS, type ContactSort } from '../../contacts/contact-queries.js';
import { CONVERSATION_SORTS, type ConversationSort } from '../../conversations/conversation-order.js';
import { FILTER_SCHEMA_REF } from '../filter-schema.js';

class SearchPage {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit: number = DEFAULT_PAGE_SIZE;

  /** The `nextCursor` of the previous page (of the same sort) */
  @IsOptional()
  @IsString()
  @MaxLength(300)
  cursor?: string;
}

export class SearchConversationsDto extends SearchPage {
  @ApiProperty({
    allOf: [{ $ref: FILTER_SCHEMA_REF }],
    description: 'What to find (docs/filters.md); an error answers 400 naming its place, e.g. `filter.and[1].value`',
  })
  @IsObject()
  filter: Record<string, unknown>;

  /** `created` (newest first), `lastActivity` (latest message first) or `waiting` (longest queued first) */
  @IsOptional()
  @IsIn(CONVERSATION_SORTS)
  sort: ConversationSort = 'created';
}

export class SearchContactsDto extends SearchPage {
  @ApiProperty({
    allOf: [{ $ref: FILTER_SCHEMA_REF }],
    description: 'What to find (docs/filters.md); an error answers 400 naming its place, e.g. `filter.and[1].value`',
  })
  @IsObject()
  filter: Record<string, unknown>;

  /** `created` (newest first) or `name` (A to Z) */
  @IsOptional()
  @IsIn(CONTACT_SORTS)
  sort: ContactSort = 'created';
}
