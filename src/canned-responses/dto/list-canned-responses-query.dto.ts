import { IsOptional, IsString, Length } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';

export class ListCannedResponsesQueryDto extends PageQueryDto {
  /**
   * Keeps the responses whose shortCode starts with it, or whose title or content contain it (case-insensitive,
   * taken literally)
   */
  @IsOptional()
  @IsString()
  @Length(1, 100)
  search?: string;
}
