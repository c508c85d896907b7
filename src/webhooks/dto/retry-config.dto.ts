import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { DEFAULT_RETRY_CONFIG } from '../webhook.schema.js';

/** In a request: either field may be left out (the default on create, unchanged on update). */
export class RetryConfigDto {
  @ApiPropertyOptional({ minimum: 0, maximum: 10, default: DEFAULT_RETRY_CONFIG.maxRetries, description: 'Retries after the first attempt' })
  @IsOptional()
  @IsInt()
  @Min(0)
  @Max(10)
  maxRetries?: number;

  @ApiPropertyOptional({
    minimum: 100,
    maximum: 3_600_000,
    default: DEFAULT_RETRY_CONFIG.backoffMs,
    description: 'Retry n waits backoffMs × 2^(n-1) ms, at most one hour',
  })
  @IsOptional()
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  backoffMs?: number;
}

export class RetryConfigView {
  @ApiProperty({ example: 5 }) maxRetries: number;
  @ApiProperty({ example: 1000 }) backoffMs: number;
}
