import { Catch, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { IdempotentReplay } from '../idempotency/idempotent-replay.js';
import { requestIdOf } from '../request-id.js';
import { EXTERNAL_API_PREFIX, ExternalApiExceptionFilter } from './external-api.filter.js';
import { normalizeException } from './normalize-exception.js';
import { ProblemDetailsFilter } from './problem-details.filter.js';

export function isExternalApiPath(path: string): boolean {
  return path === EXTERNAL_API_PREFIX || path.startsWith(`${EXTERNAL_API_PREFIX}/`);
}

/**
 * The global filter: hands each error to the filter of the interface the path belongs to (so an
 * unknown route under /api/external still answers in the envelope), and logs unexpected errors
 * with the request id; their bodies say only "Internal server error".
 */
@Catch()
export class InterfaceExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Exceptions');
  private readonly problemDetails = new ProblemDetailsFilter();
  private readonly externalApi = new ExternalApiExceptionFilter();

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    // Not an error: the idempotency guard stops a repeated request with the answer kept for it.
    if (exception instanceof IdempotentReplay) return exception.send(response);
    const error = normalizeException(exception);
    if (error.internal) {
      this.logger.error({ requestId: requestIdOf(request), err: exception }, 'Unhandled error while serving a request');
    }
    if (response.headersSent) return;
    const filter = isExternalApiPath(request.path) ? this.externalApi : this.problemDetails;
    filter.write(request, response, error);
  }
}
