import { Type } from 'class-transformer';
import {
  IsEmail,
  IsMongoId,
  IsObject,
  IsString,
  Length,
  MaxLength,
  Validate,
  ValidateNested,
  ValidatorConstraint,
  type ValidationArguments,
  type ValidatorConstraintInterface,
} from 'class-validator';
import { IsOmittable } from '../../common/dto-decorators.js';
import { exactlyOneOf } from '../../common/exactly-one-of.js';
import { IsChannel } from '../../conversations/dto/conversation-fields.js';
import { MessageContentDto } from './send-message.dto.js';

const RECIPIENT_FIELDS = ['contactId', 'phone', 'email'] as const;

/** Exactly one way to name the contact. */
export class ProactiveRecipientDto {
  /**
   * A contact of your company
   * @example 6650f0c2a1b2c3d4e5f60719
   */
  @IsOmittable()
  @IsMongoId({ message: 'contactId must be a contact id' })
  contactId?: string;

  /**
   * International format: the contact with this phone, or a new one
   * @example +14155552671
   */
  @IsOmittable()
  @IsString()
  @Length(3, 32)
  phone?: string;

  /**
   * The contact with this e-mail, or a new one
   * @example grace@example.com
   */
  @IsOmittable()
  @IsEmail()
  @MaxLength(320)
  email?: string;
}

@ValidatorConstraint({ name: 'isOneRecipient' })
class IsOneRecipient implements ValidatorConstraintInterface {
  validate(to: unknown): boolean {
    return typeof to === 'object' && to !== null && RECIPIENT_FIELDS.filter((field) => (to as Record<string, unknown>)[field] !== undefined).length === 1;
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must have exactly one of ${RECIPIENT_FIELDS.join(', ')}`;
  }
}

/** The ways to send a proactive message: a request gives exactly one of these fields. */
export const PROACTIVE_MESSAGE_MODES = ['text', 'template'] as const;

/** A message to a contact, in its open conversation on the channel or a new one (contract section 17): exactly one of `text` or `template`. */
export class ProactiveMessageDto extends MessageContentDto {
  /** Exactly one of contactId, phone or email */
  @IsObject()
  @ValidateNested()
  @Type(() => ProactiveRecipientDto)
  @Validate(IsOneRecipient)
  to: ProactiveRecipientDto;

  /**
   * The channel key; a new conversation on a channel with a reply window has no open window, so only a template goes there
   * @example whatsapp
   */
  @IsChannel({ required: true })
  channel: string;

  /**
   * The contact's name, when `to` is a phone or e-mail: given to a new contact, or to one without a name
   * @example "Grace Hopper"
   */
  @IsOmittable()
  @IsString()
  @Length(1, 200)
  name?: string;
}

/** Which mode the body chose; 400 naming the modes when it gives none or several. */
export function proactiveMessageModeOf(dto: ProactiveMessageDto): (typeof PROACTIVE_MESSAGE_MODES)[number] {
  return exactlyOneOf(dto, PROACTIVE_MESSAGE_MODES);
}
