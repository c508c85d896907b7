import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';

export class ListDuplicatesQueryDto extends PageQueryDto {
  /** The `nextCursor` of the previous page */
  @IsOptional()
  @IsString()
  @MaxLength(1100)
  declare cursor?: string;
}
