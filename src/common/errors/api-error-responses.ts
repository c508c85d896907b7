import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiPropertyOptional, ApiResponse, getSchemaPath, type ResponseObject } from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';

export class FieldProblemDto {
  @ApiProperty({ example: 'email' }) field: string;
  @ApiProperty({ example: 'email must be an e-mail address' }) message: string;
}

/** Interface A error body: RFC 9457 problem details keeping NestJS's fields. */
export class ProblemDetailsDto {
  @ApiProperty({ example: 'about:blank' }) type: string;
  @ApiProperty({ example: 'Bad Request' }) title: string;
  @ApiProperty({ example: 400 }) status: number;
  @ApiProperty({ example: 'email must be an e-mail address' }) detail: string;
  @ApiProperty({ example: '/v1/auth/register' }) instance: string;
  @ApiProperty({ example: 400 }) statusCode: number;
  @ApiProperty({ example: 'Bad Request' }) error: string;
  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }],
    example: ['email must be an e-mail address'],
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

/** A documented error answer: a status with its typical example (below), or a status and the route's own message. */
export type ErrorResponse = number | [status: number, message: string];

/** The id error examples name (a 24-character hex id, as a path would carry it). */
export const EXAMPLE_ID = '6650f0c2a1b2c3d4e5f60718';

/** The 404 of a route whose path id names a `resource`: the service's own words, `<Resource> <id> not found`. */
export const notFound = (resource: string, id = EXAMPLE_ID): ErrorResponse => [404, `${resource} ${id} not found`];

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

/** What the rate limiter answers (its seconds: until the window ends). */
const TOO_MANY_REQUESTS = 'Too many requests, retry after 42 seconds';

/** A typical message for each status of Interface A, so that each response of the docs shows its own example. */
export const PROBLEM_MESSAGES: Record<number, string> = {
  400: 'email must be an e-mail address',
  401: 'Missing bearer token',
  403: 'This action requires the admin role',
  404: `Conversation ${EXAMPLE_ID} not found`,
  409: 'A contact with this e-mail already exists',
  413: 'The file is larger than the limit of 16777216 bytes',
  429: TOO_MANY_REQUESTS,
  500: 'Internal server error',
};

/** The same for Interface B, whose callers hold an API key with scopes. */
const ENVELOPE_MESSAGES: Record<number, string> = {
  ...PROBLEM_MESSAGES,
  401: 'Missing API key (x-api-key header)',
  403: 'The API key lacks the scope webhooks:manage',
  404: `Webhook wh_${EXAMPLE_ID} not found`,
};

function describe(status: number): string {
  return DESCRIPTIONS[status] ?? STATUS_CODES[status] ?? 'Error';
}

function statusAndMessage(response: ErrorResponse, messages: Record<number, string>): [number, string] {
  if (Array.isArray(response)) return response;
  return [response, messages[response] ?? STATUS_CODES[response] ?? 'Error'];
}

/** The example body of an Interface A error of `status` (with `message`, or the status's typical one). */
export function problemExample(status: number, message = statusAndMessage(status, PROBLEM_MESSAGES)[1]): ProblemDetailsDto {
  const title = STATUS_CODES[status] ?? 'Error';
  return {
    type: 'about:blank',
    title,
    status,
    detail: message,
    // The route's own path: documentErrorInstances (swagger.ts) writes it into every operation's examples.
    instance: `/v1/conversations/${EXAMPLE_ID}`,
    statusCode: status,
    error: title,
    message: status === 400 ? [message] : message,
    requestId: '2b1f0c8e-4a5d-4a8e-9b7e-0f1e2d3c4b5a',
    ...(status === 400 ? { errors: [{ field: message.split(' ')[0], message }] } : {}),
  };
}

/**
 * Documents Interface A error responses (application/problem+json), each with its own example: a status alone
 * takes the status's typical message; `[status, message]` (or `notFound('Agent')`) states the route's own.
 */
export const ApiProblemResponses = (...responses: ErrorResponse[]) =>
  applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ...responses.map((response) => {
      const [status, message] = statusAndMessage(response, PROBLEM_MESSAGES);
      return ApiResponse({
        status,
        description: describe(status),
        content: {
          'application/problem+json': {
            schema: { $ref: getSchemaPath(ProblemDetailsDto) },
            example: problemExample(status, message),
          },
        },
      });
    }),
  );

/** The example body of an Interface B error of `status` (with `message`, or the status's typical one). */
export function envelopeExample(status: number, message = statusAndMessage(status, ENVELOPE_MESSAGES)[1]): ExternalErrorDto {
  return { success: false, error: message };
}

/** Documents Interface B error responses (`{ success: false, error }`), each with its own example, as ApiProblemResponses. */
export const ApiEnvelopeErrorResponses = (...responses: ErrorResponse[]) =>
  applyDecorators(
    ApiExtraModels(ExternalErrorDto),
    ...responses.map((response) => {
      const [status, message] = statusAndMessage(response, ENVELOPE_MESSAGES);
      return ApiResponse({
        status,
        description: describe(status),
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ExternalErrorDto) },
            example: envelopeExample(status, message),
          },
        },
      });
    }),
  );

/** One documented error answer in its interface's shape (the envelope on Interface B), with its example. */
export function errorResponseOf(external: boolean, status: number, description: string, message: string): ResponseObject {
  return external
    ? {
        description,
        content: { 'application/json': { schema: { $ref: getSchemaPath(ExternalErrorDto) }, example: envelopeExample(status, message) } },
      }
    : {
        description,
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDetailsDto) }, example: problemExample(status, message) } },
      };
}
