import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, ArrayUnique, IsArray, IsString, Length, Matches } from 'class-validator';

const CHANNEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const CHANNEL_MESSAGE = 'channel may contain only letters, digits, ".", "_" and "-"';
/** A scope names a few channels (a connector's, or a team's); more is a mistake, not a use. */
export const MAX_SCOPED_CHANNELS = 20;

/**
 * An optional channel name as the connectors send them: "whatsapp", "sms", "web-chat"; stored lower-cased.
 * Documented here since the Swagger plugin does not look inside composed decorators.
 */
export const IsChannel = () =>
  applyDecorators(
    ApiPropertyOptional({ minLength: 1, maxLength: 50, pattern: CHANNEL_PATTERN.source }),
    IsString(),
    Length(1, 50),
    Matches(CHANNEL_PATTERN, { message: CHANNEL_MESSAGE }),
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
      items: { type: 'string', minLength: 1, maxLength: 50, pattern: CHANNEL_PATTERN.source },
      example: ['whatsapp'],
      description,
    }),
    Transform(({ value }: { value: unknown }) =>
      Array.isArray(value) ? value.map((channel: unknown) => (typeof channel === 'string' ? channel.toLowerCase() : channel)) : value,
    ),
    IsArray(),
    ArrayMinSize(1, { message: 'channels must name at least one channel; leave it out for every channel' }),
    ArrayMaxSize(MAX_SCOPED_CHANNELS),
    ArrayUnique({ message: 'channels must not name a channel twice' }),
    IsString({ each: true }),
    Length(1, 50, { each: true }),
    Matches(CHANNEL_PATTERN, { each: true, message: 'each of channels may contain only letters, digits, ".", "_" and "-"' }),
  );
