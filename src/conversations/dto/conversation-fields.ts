import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';

const CHANNEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * An optional channel name as the connectors send them: "whatsapp", "sms", "web-chat"; stored lower-cased.
 * Documented here since the Swagger plugin does not look inside composed decorators.
 */
export const IsChannel = () =>
  applyDecorators(
    ApiPropertyOptional({ minLength: 1, maxLength: 50, pattern: CHANNEL_PATTERN.source }),
    IsString(),
    Length(1, 50),
    Matches(CHANNEL_PATTERN, { message: 'channel may contain only letters, digits, ".", "_" and "-"' }),
  );
