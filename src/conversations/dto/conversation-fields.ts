import { applyDecorators } from '@nestjs/common';
import { ArrayMaxSize, IsArray, IsString, Length, Matches } from 'class-validator';

export const MAX_TAGS = 50;

/** Channel names as the connectors send them: "whatsapp", "sms", "web-chat"; stored lower-cased. */
export const IsChannel = () =>
  applyDecorators(
    IsString(),
    Length(1, 50),
    Matches(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { message: 'channel may contain only letters, digits, ".", "_" and "-"' }),
  );

export const IsTagList = () =>
  applyDecorators(IsArray(), ArrayMaxSize(MAX_TAGS), IsString({ each: true }), Length(1, 50, { each: true }));
