import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class SendMessageDto {
  @ApiProperty({ example: 'Your refund is on its way.', minLength: 1, maxLength: 4096 })
  @IsString()
  @Length(1, 4096)
  text: string;
}
