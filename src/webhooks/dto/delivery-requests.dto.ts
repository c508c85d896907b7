import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../webhook-delivery.schema.js';

export class ListDeliveriesQueryDto extends PageQueryDto {
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

export class RecoverDeliveriesDto {
  /**
   * Failed deliveries created at or after this time are queued again
   * @example 2026-05-01T00:00:00Z
   */
  @ApiProperty({ format: 'date-time' })
  @IsISO8601({ strict: true })
  since: string;
}

export class RecoveredDeliveriesView {
  /** @example 3 */
  requeued: number;
}
