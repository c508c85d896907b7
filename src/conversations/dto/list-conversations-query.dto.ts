import { ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsIn, IsMongoId, IsOptional, IsString, MaxLength, ValidateBy } from 'class-validator';
import { QueryBoolean } from '../../common/dto-decorators.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsTimestamp, TIMESTAMP_FORMAT } from '../../messages/timestamp.js';
import { IsTagFilter } from '../../tags/tag-list.decorator.js';
import { IsChannelFilter } from './channel-filter.decorator.js';
import { CONVERSATION_SORTS, type ConversationSort } from '../conversation-order.js';
import { CONVERSATION_STATUSES, PRIORITIES, type Priority } from '../conversation.schema.js';

/** `a,b` (or the parameter repeated): the listed values, each once; anything but strings is left to the validators. */
const CommaList = () =>
  Transform(({ value }: { value: unknown }) => {
    const parts = Array.isArray(value) ? value : [value];
    if (!parts.every((part) => typeof part === 'string')) return value;
    return [...new Set(parts.flatMap((part: string) => part.split(',').map((item) => item.trim())))];
  });

/**
 * A non-empty list of values among `allowed` (the Swagger plugin would document class-validator's `IsIn` with
 * `each` as an array parameter, where the query takes one comma-separated string).
 */
const IsListOf = (allowed: readonly string[]) =>
  ValidateBy({
    name: 'isListOf',
    validator: {
      validate: (value: unknown) => Array.isArray(value) && value.length > 0 && value.every((item) => allowed.includes(item as string)),
      defaultMessage: (args) => `${args?.property} must be one or a comma-separated list of: ${allowed.join(', ')}`,
    },
  });


/** Conversations page with `startAfter` (the specification's name) instead of `cursor`, its filters and orders. */
export class ListConversationsQueryDto extends OmitType(PageQueryDto, ['cursor'] as const) {
  @ApiPropertyOptional({
    type: String,
    description: `One status or a comma-separated list (\`queued,human\`): conversations in any of them; statuses: ${CONVERSATION_STATUSES.join(', ')}`,
    pattern: `^(${CONVERSATION_STATUSES.join('|')})(,(${CONVERSATION_STATUSES.join('|')}))*$`,
  })
  @IsOptional()
  @CommaList()
  @IsListOf(CONVERSATION_STATUSES)
  // Typed as strings: the Swagger plugin would document a list of the status type as an array (IsListOf checks them).
  status?: string[];

  /** `true`: only conversations without an assigned agent; `false`: only those with one */
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  unassigned?: boolean;

  @IsOptional()
  @IsMongoId()
  assignedAgentId?: string;

  @IsOptional()
  @IsIn(PRIORITIES)
  priority?: Priority;

  /** Only this contact's conversations (another company's contact matches none: an empty page) */
  @IsOptional()
  @IsMongoId()
  contactId?: string;

  @IsChannelFilter('conversations')
  channel?: string;

  @IsTagFilter('conversations')
  tags?: string[];

  @ApiPropertyOptional({ description: `Only conversations created at or after this time; ${TIMESTAMP_FORMAT}` })
  @IsOptional()
  @IsTimestamp()
  createdAfter?: string;

  @ApiPropertyOptional({ description: `Only conversations created strictly before this time; ${TIMESTAMP_FORMAT}` })
  @IsOptional()
  @IsTimestamp()
  createdBefore?: string;

  /** `true`: only snoozed conversations; `false`: only those awake; absent: both */
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  snoozed?: boolean;

  @ApiPropertyOptional({
    enum: CONVERSATION_SORTS,
    default: 'created',
    description:
      '`created`: newest created first. `lastActivity`: most recent message first (conversations without messages by ' +
      'their creation). `waiting`: longest in the queue first (by `queuedAt`; conversations never queued come last). ' +
      'A `startAfter` cursor continues the order it was made in (another order answers 400).',
  })
  @IsOptional()
  @IsIn(CONVERSATION_SORTS)
  sort: ConversationSort = 'created';

  /** The `nextCursor` of the previous page (of the same `sort`) */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  startAfter?: string;
}
