import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { DEFAULT_RETRY_CONFIG } from '../webhook.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

/** In a request: either field may be left out (the default on create, unchanged on update). */
export class RetryConfigDto {
  /** Retries after the first attempt */
  @ApiPropertyOptional({ default: DEFAULT_RETRY_CONFIG.maxRetries })
  @IsOmittable()
  @IsInt()
  @Min(0)
  @Max(10)
  maxRetries?: number;

  /** Retry n waits backoffMs × 2^(n-1) ms, at most one hour */
  @ApiPropertyOptional({ default: DEFAULT_RETRY_CONFIG.backoffMs })
  @IsOmittable()
  @IsInt()
  @Min(100)
  @Max(3_600_000)
  backoffMs?: number;
}

export class RetryConfigView {
  /** @example 5 */
  maxRetries: number;
  /** @example 1000 */
  backoffMs: number;
}
