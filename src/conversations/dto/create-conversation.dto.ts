import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsMongoId, IsOptional, IsString, Length } from 'class-validator';
import { PRIORITIES, type Priority } from '../conversation.schema.js';
import { IsChannel } from './conversation-fields.js';

export class CreateConversationDto {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60719', description: 'A contact of your company' })
  @IsMongoId()
  contactId: string;

  @ApiPropertyOptional({ example: 'whatsapp', default: 'api', maxLength: 50 })
  @IsOptional()
  @IsChannel()
  channel?: string;

  @ApiPropertyOptional({ example: 'Order #1042', maxLength: 500 })
  @IsOptional()
  @IsString()
  @Length(1, 500)
  subject?: string;

  @ApiPropertyOptional({ enum: PRIORITIES, default: 'medium' })
  @IsOptional()
  @IsIn(PRIORITIES)
  priority?: Priority;

  @ApiPropertyOptional({
    example: 'Hello Grace, your order has shipped.',
    minLength: 1,
    maxLength: 4096,
    description: 'Text of a first outbound message, sent by you',
  })
  @IsOptional()
  @IsString()
  @Length(1, 4096)
  message?: string;
}
