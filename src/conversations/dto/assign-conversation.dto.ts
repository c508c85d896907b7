import { ApiProperty } from '@nestjs/swagger';
import { IsMongoId } from 'class-validator';

export class AssignConversationDto {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718', description: 'An active agent of your company' })
  @IsMongoId()
  agentId: string;
}
