import { IsTimestamp } from '../../messages/timestamp.js';

export class SnoozeConversationDto {
  /**
   * When it wakes: in the future, at most 90 days ahead. ISO-8601 with a zone (or a date, midnight UTC), or epoch
   * milliseconds
   * @example 2026-05-02T09:00:00Z
   */
  @IsTimestamp()
  until: string;
}
