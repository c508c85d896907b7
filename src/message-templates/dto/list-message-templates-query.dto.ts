import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/pagination/page-query.dto.js';
import { IsChannel } from '../../conversations/dto/conversation-fields.js';
import { TEMPLATE_STATUSES, type TemplateStatus } from '../message-template.schema.js';

export class ListMessageTemplatesQueryDto extends PageQueryDto {
  /** Only the templates of this channel key */
  @IsOptional()
  @IsChannel()
  channel?: string;

  /** Only the templates in this status: `pending` lists what awaits the channel's verdict */
  @IsOptional()
  @IsIn(TEMPLATE_STATUSES)
  status?: TemplateStatus;
}
