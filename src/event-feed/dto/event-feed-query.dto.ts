import { IntersectionType, PickType } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMinSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { WEBHOOK_EVENT_NAMES, type WebhookEventName } from '../../webhooks/webhook-events.js';

/** `types=a,b` (or `types=a&types=b`): the names, each checked like a webhook's event names. */
const CommaList = () =>
  Transform(({ value }) => {
    const parts: unknown[] = Array.isArray(value) ? value : [value];
    return parts.flatMap((part) => (typeof part === 'string' ? part.split(',').map((name) => name.trim()) : [part]));
  });

/** What the stream of either interface takes in its query (`Last-Event-ID` comes as a header). */
export class StreamEventsQueryDto {
  /** Only these events (documented by ApiEventTypesQuery, as a comma-separated array) */
  @IsOptional()
  @CommaList()
  @IsArray()
  @ArrayMinSize(1)
  @IsIn(WEBHOOK_EVENT_NAMES, { each: true })
  types?: WebhookEventName[];

  /** Start after this cursor: a `nextCursor` of the list, or an `id` of a stream frame */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  after?: string;
}

/** The list takes the stream's parameters and every list's `limit`. */
export class ListEventsQueryDto extends IntersectionType(StreamEventsQueryDto, PickType(PageQueryDto, ['limit'] as const)) {}
