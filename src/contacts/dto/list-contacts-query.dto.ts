import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { MAX_TAG_LENGTH, MAX_TAGS, normalizeTags } from '../../tags/tags.js';

/** `tags=a,b` (or `tags=a&tags=b`): the distinct non-blank names; anything but strings is left to the validators. */
function splitTags({ value }: { value: unknown }): unknown {
  const parts = Array.isArray(value) ? value : [value];
  if (!parts.every((part) => typeof part === 'string')) return value;
  return normalizeTags(parts.flatMap((part: string) => part.split(',')));
}

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

  @ApiPropertyOptional({
    type: String,
    description: `Comma-separated tags (at most ${MAX_TAGS}), e.g. \`vip,churn-risk\`: only contacts having every one of them`,
  })
  @IsOptional()
  @Transform(splitTags)
  @IsArray()
  @ArrayMaxSize(MAX_TAGS)
  @IsString({ each: true })
  @Length(1, MAX_TAG_LENGTH, { each: true })
  tags?: string[];
}
