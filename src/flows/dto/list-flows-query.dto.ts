import { IsBoolean, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { QueryBoolean } from '../../common/dto-decorators.js';

export class ListFlowsQueryDto extends PageQueryDto {
  /** "true" or "false" */
  @IsOptional()
  @QueryBoolean()
  @IsBoolean()
  isActive?: boolean;
}
