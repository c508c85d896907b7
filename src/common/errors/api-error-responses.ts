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
  @ApiProperty({ example: 'Webhook wh_3kTq9 not found' }) error: string;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid request: malformed JSON, unknown or invalid fields',
  401: 'Missing or invalid credentials',
  403: 'No permission for this action',
  404: 'Not found, or not in your company',
  409: 'Conflicts with an existing record',
  413: 'Request body or file too large',
  429: 'Rate limit exceeded; see Retry-After',
  500: 'Internal server error',
};

function describe(status: number): string {
  return DESCRIPTIONS[status] ?? STATUS_CODES[status] ?? 'Error';
}

/** Documents Interface A error responses (application/problem+json). */
export const ApiProblemResponses = (...statuses: number[]) =>
  applyDecorators(
    ApiExtraModels(ProblemDetailsDto),
    ...statuses.map((status) =>
      ApiResponse({
        status,
        description: describe(status),
        content: { 'application/problem+json': { schema: { $ref: getSchemaPath(ProblemDetailsDto) } } },
      }),
    ),
  );

/** Documents Interface B error responses (`{ success: false, error }`). */
export const ApiEnvelopeErrorResponses = (...statuses: number[]) =>
  applyDecorators(...statuses.map((status) => ApiResponse({ status, description: describe(status), type: ExternalErrorDto })));
