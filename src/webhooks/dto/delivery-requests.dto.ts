import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsISO8601, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from '../webhook-delivery.schema.js';

export class ListDeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: DeliveryStatus;
}

export class RecoverDeliveriesDto {
  @ApiProperty({ format: 'date-time', example: '2026-05-01T00:00:00Z', description: 'Failed deliveries created at or after this time are queued again' })
  @IsISO8601({ strict: true })
  since: string;
}

export class RecoveredDeliveriesView {
  @ApiProperty({ example: 3 }) requeued: number;
}
