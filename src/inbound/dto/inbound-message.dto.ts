import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsEmail,
  IsIn,
  IsMongoId,
  IsObject,
  IsString,
  Length,
  MaxLength,
  Validate,
  ValidateIf,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { IsChannel } from '../../conversations/dto/conversation-fields.js';
import { MAX_CAPTION_LENGTH } from '../../media/dto/send-media.dto.js';
import { MEDIA_TYPES, type MediaType } from '../../messages/message.schema.js';
import { IsOmittable } from '../../common/dto-decorators.js';

export class InboundSenderDto {
  /**
   * International format; identifies the contact first
   * @example +14155552671
   */
  @IsOmittable()
  @IsString()
  @Length(3, 32)
  phone?: string;

  /**
   * Identifies the contact when no phone matches
   * @example grace@example.com
   */
  @IsOmittable()
  @IsEmail()
  @MaxLength(320)
  email?: string;

  /** @example "Grace Hopper" */
  @IsOmittable()
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

@ValidatorConstraint({ name: 'onlyWithMedia' })
class OnlyWithMedia implements ValidatorConstraintInterface {
  validate(_value: unknown, args: ValidationArguments): boolean {
    return (args.object as InboundMessageDto).mediaId !== undefined;
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} is only for a message with a file: send mediaId too`;
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
   * What the contact wrote; required unless the message carries a file (`mediaId`)
   * @example "Hi, where is my order?"
   */
  @ValidateIf((message: InboundMessageDto) => message.mediaId === undefined || message.text !== undefined)
  @IsString()
  @Length(1, 4096)
  text?: string;

  /**
   * A file the contact sent: the `id` of an upload of `POST /api/external/media` that no message carries yet
   * @example 6650f0c2a1b2c3d4e5f60720
   */
  @IsOmittable()
  @IsMongoId({ message: 'mediaId must be the id of an upload (POST /api/external/media)' })
  mediaId?: string;

  /** The message's type: only with `mediaId`, and then the file's kind (when omitted, taken from the file) */
  @ValidateIf((message: InboundMessageDto) => message.type !== undefined)
  @Validate(OnlyWithMedia)
  @IsIn(MEDIA_TYPES)
  type?: MediaType;

  /**
   * The file's caption, only with `mediaId`
   * @example "The parcel as it arrived"
   */
  @ValidateIf((message: InboundMessageDto) => message.caption !== undefined)
  @Validate(OnlyWithMedia)
  @IsString()
  @MaxLength(MAX_CAPTION_LENGTH)
  caption?: string;

  /** @example whatsapp */
  @ApiPropertyOptional({ default: 'api' })
  @IsOmittable()
  @IsChannel()
  channel?: string;

  /**
   * The channel's own id of the message, unique per company and channel: send it so that a retry is safe. A message
   * whose externalId is already stored on the channel answers 200 with the stored message and `duplicate: true`, and
   * stores and emits nothing
   * @example wamid.HBgLMTQxNTU1NTI2NzEVAgASGBQ
   */
  @IsOmittable()
  @IsString()
  @Length(1, 255)
  externalId?: string;
}
