import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 100;

export class PageQueryDto {
  // Only integers pass; the bound and the default are constants, which the Swagger plugin cannot read.
  @ApiPropertyOptional({ type: 'integer', maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit: number = DEFAULT_PAGE_SIZE;

  /** The `nextCursor` of the previous page */
  @IsOptional()
  @IsString()
  @MaxLength(200)
  cursor?: string;
}
