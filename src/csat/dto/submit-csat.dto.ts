import { IsInt, IsString, Max, MaxLength, Min } from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';

export class SubmitCsatDto {
  /**
   * 1 (bad) to 5 (very good)
   * @example 5
   */
  @IsInt()
  @Min(1)
  @Max(5)
  rating: number;

  /** @example "Quick and kind, thanks!" */
  @IsOmittable()
  @IsString()
  @MaxLength(2000)
  comment?: string;
}
