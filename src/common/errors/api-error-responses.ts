import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';

export class FieldProblemDto {
  @ApiProperty({ example: 'email' }) field: string;
  @ApiProperty({ example: 'email must be an email' }) message: string;
}

/** Interface A error body: RFC 9457 problem details keeping NestJS's fields. */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'about:blank' }) type: string;
  @ApiProperty({ example: 'Bad Request' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty({ example: 'email must be an email' }) detail: string;
  @ApiProperty({ example: '/v1/auth/register' }) instance: string;
  @ApiProperty({ example: 400 }) statusCode: number;
  @ApiProperty({ example: 'Bad Request' }) error: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['email must be an email'],
  })
  message: string | string[];
  @ApiProperty({ example: '2b1f0c8e-4a5d-4a8e-9b7e-0f1e2d3c4b5a' }) requestId: string;
  @ApiPropertyOptional({ type: [FieldProblemDto] }) errors?: FieldProblemDto[];
}

/** Interface B failure envelope. */
export class ExternalErrorDto {
  @ApiProperty({ example: false }) success: boolean;
  @ApiProperty({ example: 'The API key lacks the scope webhooks:manage' }) error: string;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: malformed JSON, unknown or invalid fields',
  401: 'Missing or invalid credentials',
  403: 'No permission for this action',
  404: 'Not found, or not in your company',
  409: 'Conflicts with an existing record',
  410: 'Gone: an event cursor older than the events kept (EVENT_RETENTION_DAYS)',
  413: 'Request body or file too large',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'Internal server error',
  503: 'The server is shutting down: connect again',
};

/** A typical message for each status, so that each response of the docs shows its own example. */
const EXAMPLE_MESSAGES: Record<number, string> = {
  400: 'email must be an email',
  401: 'Missing bearer token',
  403: 'This action requires the admin role',
  404: 'Conversation 6650f0c2a1b2c3d4e5f60718 not found',
  409: 'A contact with this e-mail already exists',
  413: 'The file is larger than the limit of 16777216 bytes',
  429: 'ThrottlerException: Too Many Requests',
  500: 'Internal server error',
};

function describe(status: number): string {
  return DESCRIPTIONS[status] ?? STATUS_CODES[status] ?? 'Error';
}

function exampleMessage(status: number): string {
  return EXAMPLE_MESSAGES[status] ?? STATUS_CODES[status] ?? 'Error';
}

/** The example body of an Interface A error of `status` (with `message`, or the status's typical one). */
export function problemExample(status: number, message = exampleMessage(status)): ProblemDetailsDto {
  const title = STATUS_CODES[status] ?? 'Error';
  return {
    type: 'about:blank',
    title,
    status,
    detail: message,
    instance: '/v1/conversations/6650f0c2a1b2c3d4e5f60718',
    statusCode: status,
    error: title,
    message: status === 400 ? [message] : message,
    requestId: '2b1f0c8e-4a5d-4a8e-9b7e-0f1e2d3c4b5a',
    ...(status === 400 ? { errors: [{ field: 'email', message }] } : {}),
  };
}

/** Documents Interface A error responses (application/problem+json), each with its own example. */
export const ApiProblemResponses = (...statuses: number[]) =>
  applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: describe(status),
        content: {
          'application/problem+json': {
            schema: { $ref: getSchemaPath(ProblemDetailsDto) },
            example: problemExample(status),
          },
        },
      }),
    ),
  );

/** The example body of an Interface B error of `status` (with `message`, or the status's typical one). */
export function envelopeExample(status: number, message = status === 404 ? 'Webhook wh_3kTq9 not found' : exampleMessage(status)): ExternalErrorDto {
  return { success: false, error: message };
}

/** Documents Interface B error responses (`{ success: false, error }`), each with its own example. */
export const ApiEnvelopeErrorResponses = (...statuses: number[]) =>
  applyDecorators(
    ApiExtraModels(ExternalErrorDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: describe(status),
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ExternalErrorDto) },
            example: envelopeExample(status),
          },
        },
      }),
    ),
  );
