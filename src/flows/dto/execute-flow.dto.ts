import { ApiProperty } from '@nestjs/swagger';
import { IsMongoId } from 'class-validator';

export class ExecuteFlowDto {
  @ApiProperty({ example: '6650f0c2a1b2c3d4e5f60718', description: 'A conversation of your company, not closed' })
  @IsMongoId({ message: 'conversationId must be a conversation id' })
  conversationId: string;
}
