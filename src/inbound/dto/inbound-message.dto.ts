import { ApiPropertyOptional } from '@nestjs/swagger';
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
  /**
   * International format; identifies the contact first
   * @example +14155552671
   */
  @IsOptional()
  @IsString()
  @Length(3, 32)
  phone?: string;

  /**
   * Identifies the contact when no phone matches
   * @example grace@example.com
   */
  @IsOptional()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  /** @example "Grace Hopper" */
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
    return 'from must have a phone or an e-mail address';
  }
}

export class InboundMessageDto {
  /** The contact: at least a phone or an email */
  @IsObject()
  @ValidateNested()
  @Type(() => InboundSenderDto)
  @Validate(HasPhoneOrEmail)
  from: InboundSenderDto;

  /**
   * Required: inbound messages are text; inbound media is not supported
   * @example "Hi, where is my order?"
   */
  @IsString()
  @Length(1, 4096)
  text: string;

  /** @example whatsapp */
  @ApiPropertyOptional({ default: 'api' })
  @IsOptional()
  @IsChannel()
  channel?: string;

  /**
   * The channel's own id of the message, unique per company and channel: send it so that a retry is safe. A message
   * whose externalId is already stored on the channel answers 200 with the stored message and `duplicate: true`, and
   * stores and emits nothing
   * @example wamid.HBgLMTQxNTU1NTI2NzEVAgASGBQ
   */
  @IsOptional()
  @IsString()
  @Length(1, 255)
  externalId?: string;
}
