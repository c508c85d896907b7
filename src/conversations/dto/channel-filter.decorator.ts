import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length } from 'class-validator';

/**
 * A `channel` query filter: one channel, e.g. `whatsapp`, compared in lower case as conversations store it.
 * `records` names what it filters (documented here: the Swagger plugin does not look inside composed decorators).
 */
export const IsChannelFilter = (records: string) =>
  applyDecorators(
    ApiPropertyOptional({ type: String, minLength: 1, maxLength: 50, description: `Only ${records} on this channel, e.g. \`whatsapp\` (compared in lower case)` }),
    IsOptional(),
    Transform(({ value }) => (typeof value === 'string' ? value.trim().toLowerCase() : value)),
    IsString(),
    Length(1, 50),
  );
