import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { requestIdOf } from '../request-id.js';
import { clipForBody } from './error-budget.js';
import type { NormalizedError } from './normalize-exception.js';
import { normalizeException } from './normalize-exception.js';

/** What of the request's path `instance` repeats (error-budget.ts counts it in the fixed part of a body). */
const MAX_INSTANCE_BYTES = 200;

/** RFC 6750: the scheme, and `invalid_token` when a token was sent but refused. */
function bearerChallenge(request: Request): string {
  return request.headers.authorization ? 'Bearer realm="parley", error="invalid_token"' : 'Bearer realm="parley"';
}

/**
 * Interface A: RFC 9457 problem details that keep NestJS's familiar `statusCode`, `error` and
 * `message`, plus the request id and, for a 400, the field problems. A problem of our own type
 * (TypedProblemException) adds its extension members.
 */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.write(http.getRequest<Request>(), http.getResponse<Response>(), normalizeException(exception));
  }

  write(request: Request, response: Response, error: NormalizedError): void {
    if (error.status === 401) response.setHeader('WWW-Authenticate', bearerChallenge(request));
    if (error.retryAfterSeconds) response.setHeader('Retry-After', String(error.retryAfterSeconds));
    const detail = Array.isArray(error.message) ? error.message.join('; ') : error.message;
    response
      .status(error.status)
      .type('application/problem+json')
      .send(
        JSON.stringify({
          type: error.problem?.type ?? 'about:blank',
          title: error.problem?.title ?? error.title,
          status: error.status,
          detail,
          // Bounded like the rest of an error body: a path is whatever the client sent.
          instance: clipForBody(request.path, MAX_INSTANCE_BYTES),
          statusCode: error.status,
          error: error.title,
          message: error.message,
          requestId: requestIdOf(request),
          ...(error.errors ? { errors: error.errors } : {}),
          ...error.problem?.extensions,
        }),
      );
  }
}
