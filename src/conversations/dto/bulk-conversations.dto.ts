import { ApiProperty } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsIn, IsMongoId, IsString, Length } from 'class-validator';
import { IsTimestamp } from '../../messages/timestamp.js';
import { IsTagList } from '../../tags/tag-list.decorator.js';
import { PRIORITIES, type Priority } from '../conversation.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export const BULK_ACTIONS = ['assign', 'close', 'set_priority', 'add_tags', 'snooze'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];
export const MAX_BULK_IDS = 100;

/** The fields that go with an action (each required by its action, refused with another). */
export const BULK_ACTION_FIELDS = {
  assign: { required: ['agentId'], optional: [] },
  close: { required: [], optional: ['reason'] },
  set_priority: { required: ['priority'], optional: [] },
  add_tags: { required: ['tags'], optional: [] },
  snooze: { required: ['until'], optional: [] },
} as const satisfies Record<BulkAction, { required: readonly BulkField[]; optional: readonly BulkField[] }>;
export type BulkField = 'agentId' | 'priority' | 'tags' | 'until' | 'reason';
export const BULK_FIELDS: readonly BulkField[] = ['agentId', 'priority', 'tags', 'until', 'reason'];

export class BulkConversationsDto {
  /**
   * The conversations, each acted on on its own, answered in this order. A malformed, missing or other company's id
   * gets its own 404 result
   * @example ["6650f0c2a1b2c3d4e5f60718", "6650f0c2a1b2c3d4e5f60722"]
   */
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_BULK_IDS)
  @ArrayUnique({ message: 'ids must not repeat an id' })
  @IsString({ each: true })
  @Length(1, 64, { each: true })
  @ApiProperty({ type: [String], minItems: 1, maxItems: MAX_BULK_IDS, uniqueItems: true })
  ids: string[];

  /**
   * What to do to each: `assign` (with `agentId`), `close` (optional `reason`), `set_priority` (with `priority`),
   * `add_tags` (with `tags`), `snooze` (with `until`)
   */
  @IsIn(BULK_ACTIONS)
  action: BulkAction;

  /**
   * `assign`: an active agent of your company
   * @example 6650f0c2a1b2c3d4e5f60701
   */
  @IsOmittable()
  @IsMongoId()
  agentId?: string;

  /** `set_priority` */
  @IsOmittable()
  @IsIn(PRIORITIES)
  priority?: Priority;

  @IsOmittable()
  @IsTagList('`add_tags`: tags added to those each conversation has')
  tags?: string[];

  /**
   * `snooze`: when they wake, in the future and at most 90 days ahead (ISO-8601 with a zone, or epoch milliseconds)
   * @example 2026-05-02T09:00:00Z
   */
  @IsOmittable()
  @IsTimestamp()
  until?: string;

  /**
   * `close`: why, kept on each conversation
   * @example "Resolved: outage over"
   */
  @IsOmittable()
  @IsString()
  @Length(1, 500)
  reason?: string;
}
