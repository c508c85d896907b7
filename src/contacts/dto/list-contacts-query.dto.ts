import { Transform } from 'class-transformer';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsTagFilter } from '../../tags/tag-list.decorator.js';

export class ListContactsQueryDto extends PageQueryDto {
  /**
   * Case-insensitive text found anywhere in the name, e-mail or phone, e.g. `grace`; for the phone, spaces, dashes,
   * dots, parentheses and "+" are ignored ("415-555" finds +14155552671)
   */
  @IsOptional()
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() || undefined : value))
  @IsString()
  @MaxLength(100)
  search?: string;

  @IsTagFilter('contacts')
  tags?: string[];
}
