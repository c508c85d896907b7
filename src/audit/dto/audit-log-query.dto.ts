import { Type } from 'class-transformer';
import { IsDate, IsOptional, IsString, Matches, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';

export class AuditLogQueryDto extends PageQueryDto {
  /** Only entries of this agent or API key */
  @IsOptional()
  @IsString()
  @MaxLength(100)
  actorId?: string;

  /** Only this action, e.g. `agent.updated` */
  @IsOptional()
  @IsString()
  @Matches(/^[a-z_]+\.[a-z_.]+$/)
  @MaxLength(100)
  action?: string;

  /** Only entries about this kind of record, e.g. `webhook` */
  @IsOptional()
  @IsString()
  @Matches(/^[a-z_]+$/)
  @MaxLength(50)
  targetType?: string;

  @IsOptional()
  @IsString()
  @MaxLength(320)
  targetId?: string;

  /** Only entries at or after this time (ISO-8601) */
  @IsOptional()
  @Type(() => Date)
  @IsDate()
  after?: Date;

  /** Only entries before this time (ISO-8601) */
  @IsOptional()
  @Type(() => Date)
  @IsDate()
  before?: Date;
}
