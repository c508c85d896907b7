import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsMongoId, IsOptional, IsString, Length } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsChannelFilter } from '../../conversations/dto/channel-filter.decorator.js';
import { IsTimestamp, TIMESTAMP_FORMAT } from '../../messages/timestamp.js';

export const MAX_QUERY_LENGTH = 200;

export class SearchMessagesQueryDto extends PageQueryDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_QUERY_LENGTH,
    description:
      'The words to find (1 to 200 characters, trimmed). A message matches when it contains every word, in its text ' +
      'or caption, whatever the case and accents; a `"quoted phrase"` must appear as written (its words in that ' +
      'order, case and accents aside).',
    example: 'refund "credit card"',
  })
  @Transform(({ value }) => (typeof value === 'string' ? value.trim() : value))
  @IsString()
  @Length(1, MAX_QUERY_LENGTH)
  q: string;

  /** Only messages of this conversation (another company's matches none) */
  @IsOptional()
  @IsMongoId()
  conversationId?: string;

  /** Only messages of this contact's conversations (another company's matches none) */
  @IsOptional()
  @IsMongoId()
  contactId?: string;

  @IsChannelFilter('messages')
  channel?: string;

  @ApiPropertyOptional({ description: `Only messages strictly newer than this; ${TIMESTAMP_FORMAT}` })
  @IsOptional()
  @IsTimestamp()
  after?: string;

  @ApiPropertyOptional({ description: `Only messages strictly older than this; ${TIMESTAMP_FORMAT}` })
  @IsOptional()
  @IsTimestamp()
  before?: string;
}
