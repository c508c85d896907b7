import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsString, Matches } from 'class-validator';

/**
 * A channel key (contract section 17): what conversations carry in `channel`, and what a channel record is found
 * by. Keys are lower-case; a conversation's `channel` may be sent in any case and is stored lower-cased.
 */
export const CHANNEL_KEY_PATTERN = /^[a-z0-9_.:+-]{1,64}$/;
const ANY_CASE_CHANNEL_PATTERN = /^[A-Za-z0-9_.:+-]{1,64}$/;
const CHANNEL_CHARACTERS = 'letters, digits, ".", "_", ":", "+" and "-", 1 to 64 of them';
/** Channels compare lower-cased: a list's strings are lower-cased as they arrive, anything else left for the validators. */
export const LowerCasedChannels = () =>
  Transform(({ value }: { value: unknown }) =>
    Array.isArray(value) ? value.map((channel: unknown) => (typeof channel === 'string' ? channel.toLowerCase() : channel)) : value,
  );
/** A scope names a few channels (a connector's, or a team's); more is a mistake, not a use. */
export const MAX_SCOPED_CHANNELS = 20;

/**
 * A channel as the connectors send it ("whatsapp", "sms", "web-chat"), in any case; stored lower-cased. `required`:
 * the field must be given. Documented here since the Swagger plugin does not look inside composed decorators.
 */
export const IsChannel = (options: { required?: boolean } = {}) =>
  applyDecorators(
    (options.required ? ApiProperty : ApiPropertyOptional)({ minLength: 1, maxLength: 64, pattern: ANY_CASE_CHANNEL_PATTERN.source }),
    IsString(),
    Matches(ANY_CASE_CHANNEL_PATTERN, { message: `channel may contain only ${CHANNEL_CHARACTERS}` }),
  );

/** A channel record's key: lower-case only, so that it is exactly what conversations carry. */
export const IsChannelKey = () =>
  applyDecorators(
    ApiProperty({ minLength: 1, maxLength: 64, pattern: CHANNEL_KEY_PATTERN.source, example: 'whatsapp' }),
    IsString(),
    Matches(CHANNEL_KEY_PATTERN, { message: `key may contain only lower-case ${CHANNEL_CHARACTERS}` }),
  );

/**
 * The channels a credential or a webhook is scoped to, named as conversations' `channel` are (lower-cased here, so
 * "WhatsApp" and "whatsapp" are one channel). At least one: leave the field out for every channel.
 */
export const IsChannelList = (description: string) =>
  applyDecorators(
    ApiPropertyOptional({
      type: [String],
      minItems: 1,
      maxItems: MAX_SCOPED_CHANNELS,
      uniqueItems: true,
      items: { type: 'string', minLength: 1, maxLength: 64, pattern: ANY_CASE_CHANNEL_PATTERN.source },
      example: ['whatsapp'],
      description,
    }),
    LowerCasedChannels(),
    IsArray(),
    ArrayMinSize(1, { message: 'channels must name at least one channel; leave it out for every channel' }),
    ArrayMaxSize(MAX_SCOPED_CHANNELS),
    ArrayUnique({ message: 'channels must not name a channel twice' }),
    IsString({ each: true }),
    Matches(ANY_CASE_CHANNEL_PATTERN, { each: true, message: `each of channels may contain only ${CHANNEL_CHARACTERS}` }),
  );
