import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { PLACEHOLDERS } from '../placeholders.js';
import { SHORT_CODE_PATTERN } from '../canned-response.schema.js';

/** Documented here since the Swagger plugin does not look inside composed decorators. */
export const IsShortCode = (required: boolean) =>
  applyDecorators(
    ApiProperty({
      required,
      pattern: SHORT_CODE_PATTERN.source,
      minLength: 1,
      maxLength: 50,
      description: 'What agents type to find it: lower-case letters, digits, "_" and "-"; unique within your company (409)',
      example: 'refund-sent',
    }),
    IsString(),
    Matches(SHORT_CODE_PATTERN, { message: 'shortCode must be 1 to 50 of lower-case letters, digits, "_" and "-"' }),
  );

export const IsCannedTitle = (required: boolean) =>
  applyDecorators(ApiProperty({ required, minLength: 1, maxLength: 200, example: 'Refund on its way' }), IsString(), Length(1, 200));

export const IsCannedContent = (required: boolean) =>
  applyDecorators(
    ApiProperty({
      required,
      minLength: 1,
      maxLength: 4096,
      description:
        `The text sent, with placeholders filled in for the conversation when sent: ${PLACEHOLDERS.map((name) => `\`{{${name}}}\``).join(', ')} ` +
        '(a missing value renders as empty). Any other `{{...}}`, or a `{{` never closed, answers 400',
      example: 'Hi {{contact.name}}, your refund is on its way. {{agent.name}}, {{company.name}}',
    }),
    IsString(),
    Length(1, 4096),
  );
