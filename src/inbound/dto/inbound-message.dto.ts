import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsEmail,
  IsObject,
  IsOptional,
  IsString,
  Length,
  MaxLength,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { IsChannel } from '../../conversations/dto/conversation-fields.js';

export class InboundSenderDto {
  @ApiPropertyOptional({ example: '+14155552671', description: 'International format; identifies the contact first' })
  @IsOptional()
  @IsString()
  @Length(3, 32)
  phone?: string;

  @ApiPropertyOptional({ example: 'grace@example.com', description: 'Identifies the contact when no phone matches' })
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  @ApiPropertyOptional({ example: 'Grace Hopper', maxLength: 200 })
  @IsOptional()
  @IsString()
  @Length(1, 200)
  name?: string;
}

@ValidatorConstraint({ name: 'hasPhoneOrEmail' })
class HasPhoneOrEmail implements ValidatorConstraintInterface {
  validate(from: unknown): boolean {
    const sender = from as InboundSenderDto | null;
    return typeof sender === 'object' && sender !== null && (sender.phone !== undefined || sender.email !== undefined);
  }

  defaultMessage(): string {
    return 'from must have a phone or an email';
  }
}

export class InboundMessageDto {
  @ApiProperty({ type: InboundSenderDto, description: 'The contact: at least a phone or an email' })
  @IsObject()
  @ValidateNested()
  @Type(() => InboundSenderDto)
  @Validate(HasPhoneOrEmail)
  from: InboundSenderDto;

  @ApiProperty({
    example: 'Hi, where is my order?',
    minLength: 1,
    maxLength: 4096,
    description: 'Required: inbound messages are text; inbound media is not supported',
  })
  @IsString()
  @Length(1, 4096)
  text: string;

  @ApiPropertyOptional({ example: 'whatsapp', default: 'api', maxLength: 50 })
  @IsOptional()
  @IsChannel()
  channel?: string;
}
