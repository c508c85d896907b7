import { IsBoolean, IsOptional } from 'class-validator';
import { QueryBoolean } from '../../common/dto-decorators.js';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';

export class ListSlaPoliciesQueryDto extends PageQueryDto {
  /** "true" or "false" */
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  isActive?: boolean;
}
