import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsOptional, IsString, Length } from 'class-validator';
import { PRIORITIES, type Priority } from '../conversation.schema.js';
import { IsChannel } from './conversation-fields.js';

export class CreateConversationDto {
  /**
   * A contact of your company
   * @example 6650f0c2a1b2c3d4e5f60719
   */
  @IsMongoId()
  contactId: string;

  /** @example whatsapp */
  @ApiPropertyOptional({ default: 'api' })
  @IsOptional()
  @IsChannel()
  channel?: string;

  /** @example "Order #1042" */
  @IsOptional()
  @IsString()
  @Length(1, 500)
  subject?: string;

  @ApiPropertyOptional({ default: 'medium' })
  @IsOptional()
  @IsIn(PRIORITIES)
  priority?: Priority;

  /**
   * Text of a first outbound message, sent by you
   * @example "Hello Grace, your order has shipped."
   */
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  message?: string;
}
