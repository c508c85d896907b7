import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';

/**
 * A channel key (contract section 17): what conversations carry in `channel`, and what a channel record is found
 * by. Keys are lower-case; a conversation's `channel` may be sent in any case and is stored lower-cased.
 */
export const CHANNEL_KEY_PATTERN = /^[a-z0-9_.:+-]{1,64}$/;
const ANY_CASE_CHANNEL_PATTERN = /^[A-Za-z0-9_.:+-]{1,64}$/;
const CHANNEL_CHARACTERS = 'letters, digits, ".", "_", ":", "+" and "-", 1 to 64 of them';

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
