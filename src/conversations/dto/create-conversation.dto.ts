import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsString, Length } from 'class-validator';
import { PRIORITIES, type Priority } from '../conversation.schema.js';
import { IsChannel } from './conversation-fields.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export class CreateConversationDto {
  /**
   * A contact of your company
   * @example 6650f0c2a1b2c3d4e5f60719
   */
  @IsMongoId()
  contactId: string;

  /** @example whatsapp */
  @ApiPropertyOptional({ default: 'api' })
  @IsOmittable()
  @IsChannel()
  channel?: string;

  /** @example "Order #1042" */
  @IsOmittable()
  @IsString()
  @Length(1, 500)
  subject?: string;

  @ApiPropertyOptional({ default: 'medium' })
  @IsOmittable()
  @IsIn(PRIORITIES)
  priority?: Priority;

  /**
   * Text of a first outbound message, sent by you
   * @example "Hello Grace, your order has shipped."
   */
  @IsOmittable()
  @IsString()
  @Length(1, 4096)
  message?: string;
}
